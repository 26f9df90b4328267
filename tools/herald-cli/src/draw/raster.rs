//! SVG to PNG with resvg, text set in the system's fonts.
//!
//! resvg draws text only with fonts it is given; this loads the system fonts (fontdb scans the
//! usual directories and fontconfig's configuration). Without any, the PNG is rendered without
//! text, with a warning: the SVG written with `--out FILE.svg` keeps its text.

use crate::CliError;
use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{self, fontdb};

/// Largest picture rendered, in pixels (width × height).
const MAX_PIXELS: u64 = 100_000_000;

/// Families the pictures ask for, as in [`super::FONT`].
const FAMILIES: [&str; 4] = ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"];

/// Renders `svg` on white and encodes it as PNG, at one pixel per SVG unit.
pub(super) fn png(svg: &str) -> Result<Vec<u8>, CliError> {
    let mut options = usvg::Options::default();
    let db = options.fontdb_mut();
    db.load_system_fonts();
    if db.is_empty() {
        eprintln!("herald: warning: no system fonts found; the PNG has no text (the SVG has)");
    } else if let Some(family) = fallback_family(db) {
        // None of the named families: let the generic `sans-serif` find what there is.
        db.set_sans_serif_family(family);
    }
    let tree = usvg::Tree::from_str(svg, &options)
        .map_err(|e| CliError::Failed(format!("cannot render the SVG: {e}")))?;
    let size = tree.size().to_int_size();
    let (w, h) = (size.width(), size.height());
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(CliError::Usage(format!(
            "the picture is {w}×{h} px, too large for a PNG: write an SVG or draw fewer processors"
        )));
    }
    let mut pixmap = Pixmap::new(w, h)
        .ok_or_else(|| CliError::Failed(format!("cannot make a {w}×{h} px image")))?;
    pixmap.fill(Color::WHITE);
    resvg::render(&tree, Transform::identity(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| CliError::Failed(format!("cannot encode the PNG: {e}")))
}

/// A family to stand in for `sans-serif` when none of [`FAMILIES`] is installed.
fn fallback_family(db: &fontdb::Database) -> Option<String> {
    let has = |name: &str| {
        db.faces()
            .any(|f| f.families.iter().any(|(family, _)| family == name))
    };
    if FAMILIES.iter().any(|f| has(f)) {
        return None;
    }
    db.faces()
        .find_map(|f| f.families.first().map(|(family, _)| family.clone()))
}
