//! The combining collectives (reduce, allreduce, scan, allgather, barrier) in rank order, so any
//! associative operation works, commutative or not: on the rank-ordered tree, or (small
//! allreduces) in shared memory (`small.rs`).

use super::call::CollectiveKind;
use super::error::CollectiveError;
use super::rank::CommRank;
use super::small;
use crate::runtime::exec::stream_lines;
use bytemuck::Pod;

/// Room for `len` elements of `T` that a peer's slice is received into: the endpoint's scratch
/// `partial` (reused across calls, grown as needed) when `T`'s alignment allows, else `owned`.
fn element_scratch<'a, T: Pod>(
    partial: &'a mut Vec<u128>,
    owned: &'a mut Vec<T>,
    len: usize,
) -> &'a mut [T] {
    let bytes = len * std::mem::size_of::<T>();
    partial.resize(partial.len().max(bytes.div_ceil(16)), 0);
    let scratch: &mut [u8] = &mut bytemuck::cast_slice_mut(&mut partial[..])[..bytes];
    match bytemuck::try_cast_slice_mut(scratch) {
        Ok(t) => t,
        Err(_) => {
            owned.resize(len, T::zeroed());
            owned
        }
    }
}

/// The rank-ordered `radix`-nomial tree rooted at rank 0 that the combining collectives use.
///
/// Rank `v`'s subtree is the contiguous range `v .. v + R^d` (cut at `n`), `d` the position of
/// `v`'s lowest non-zero digit in base `R` (the whole range for rank 0); its children are
/// `v + j·R^i` for `i < d`, `j = 1 .. R`, in increasing order, so combining a rank's value with
/// its children's partials left to right is rank order: any associative operation works. Radix
/// 2 is the binomial tree; radix `n` is the flat tree (everyone sends to rank 0), the right
/// shape when many ranks share a core and each level of a deeper tree waits for a scheduler
/// round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OrderedTree {
    n: usize,
    radix: usize,
}

impl OrderedTree {
    /// The tree for `n` ranks and radix `radix` (at least 2).
    pub(crate) fn new(n: usize, radix: usize) -> OrderedTree {
        OrderedTree {
            n,
            radix: radix.max(2),
        }
    }

    /// `R^d` for rank `v` (its subtree's width before the cut at `n`).
    fn width(&self, v: usize) -> usize {
        let mut w = 1;
        while w < self.n && v % (w * self.radix) == 0 {
            w *= self.radix;
        }
        w
    }

    /// The end of rank `v`'s subtree range.
    pub(crate) fn subtree_end(&self, v: usize) -> usize {
        if v == 0 {
            self.n
        } else {
            (v + self.width(v)).min(self.n)
        }
    }

    /// Rank `v`'s parent (`None` for rank 0).
    pub(crate) fn parent(&self, v: usize) -> Option<usize> {
        if v == 0 {
            return None;
        }
        let w = self.width(v);
        Some(v - (v / w % self.radix) * w)
    }

    /// Rank `v`'s children with the ends of their subtrees, in combining order.
    pub(crate) fn children(&self, v: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let top = if v == 0 { self.n } else { self.width(v) };
        std::iter::successors(Some(1usize), move |&w| w.checked_mul(self.radix))
            .take_while(move |&w| w < top)
            .flat_map(move |w| (1..self.radix).map(move |j| (v + j * w, w)))
            .take_while(move |&(c, _)| c < self.n) // increasing: none later is in range
            .map(move |(c, w)| (c, (c + w).min(self.n)))
    }
}

impl CommRank<'_> {
    /// Combines every rank's value up the rank-ordered tree rooted at 0 ([`OrderedTree`]) in
    /// call `id`. Returns this rank's subtree partial (the full result on rank 0) and, for scan,
    /// the partials before each child.
    fn reduce_up<T: Pod>(
        &mut self,
        id: (u64, u64),
        value: T,
        op: &impl Fn(T, T) -> T,
        mut before: Option<&mut Vec<T>>,
    ) -> Result<T, CollectiveError> {
        let tree = self.comm.ordered_tree();
        let mut acc = value;
        for (child, _) in tree.children(self.rank) {
            if let Some(b) = before.as_deref_mut() {
                b.push(acc);
            }
            let partial: T = self.recv_value(child, id)?;
            acc = op(acc, partial);
        }
        if let Some(parent) = tree.parent(self.rank) {
            self.send_value(parent, id, &acc)?;
        }
        Ok(acc)
    }

    /// Reduces every rank's `value` with `op` in rank order (`op` must be associative; it need
    /// not be commutative). The root gets `Some(v0 ∘ v1 ∘ … ∘ vn-1)`, the others `None`.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast). A panic in `op` poisons the communicator.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut team, mut comm) = (herald::Team::new(3)?, herald::Comm::new(3)?);
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     // String concatenation is associative but not commutative: rank order holds.
    ///     let mine = [b'a' + c.rank() as u8, 0, 0, 0];
    ///     c.reduce(1, mine, |a, b| {
    ///         let mut out = [0u8; 4];
    ///         let joined: Vec<u8> = a.iter().chain(&b).copied().filter(|&x| x != 0).collect();
    ///         out[..joined.len()].copy_from_slice(&joined);
    ///         out
    ///     })
    ///     .unwrap()
    /// });
    /// assert_eq!(got, [None, Some(*b"abc\0"), None]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce<T: Pod>(
        &mut self,
        root: usize,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> Result<Option<T>, CollectiveError> {
        let call = self.begin(CollectiveKind::Reduce, root, std::mem::size_of::<T>())?;
        let result = self.reduce_in(call.id(), root, value, &op);
        call.end(result)
    }

    fn reduce_in<T: Pod>(
        &mut self,
        id: (u64, u64),
        root: usize,
        value: T,
        op: &impl Fn(T, T) -> T,
    ) -> Result<Option<T>, CollectiveError> {
        let mut acc = self.reduce_up(id, value, op, None)?;
        if root != 0 {
            if self.rank == 0 {
                self.send_value(root, id, &acc)?;
            } else if self.rank == root {
                acc = self.recv_value(0, id)?;
            }
        }
        Ok((self.rank == root).then_some(acc))
    }

    /// Every rank gets `v0 ∘ v1 ∘ … ∘ vn-1` (rank order; `op` associative).
    ///
    /// A value of at most
    /// [`CommOptions::allreduce_shared_max_bytes`](crate::CommOptions::allreduce_shared_max_bytes)
    /// (by default 4 KiB when ranks share CPUs, else 64 bytes) goes through shared memory:
    /// every rank deposits it in its own
    /// slot and, once every rank's slot holds this call's value, folds all of them itself, so
    /// each rank runs at most twice per call (a turn matters when ranks share CPUs). A larger
    /// value is combined up the rank-ordered tree through the rings and broadcast.
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce). A rank whose `op` panics after every rank deposited does
    /// not stop the others from finishing this call with the right value; their next call
    /// fails.
    pub fn allreduce<T: Pod>(
        &mut self,
        value: T,
        op: impl Fn(T, T) -> T,
    ) -> Result<T, CollectiveError> {
        let bytes = std::mem::size_of::<T>();
        let call = self.begin(CollectiveKind::Allreduce, 0, bytes)?;
        let id = call.id();
        let result = if bytes <= self.comm.core().small.max_bytes() {
            self.allreduce_small(id, value, &op)
        } else {
            self.reduce_up(id, value, &op, None).and_then(|mut acc| {
                self.broadcast_default(0, id, bytemuck::bytes_of_mut(&mut acc))?;
                Ok(acc)
            })
        };
        call.end(result)
    }

    /// The next epoch of this rank's small allreduces (`small.rs`).
    fn next_small_epoch(&mut self) -> u64 {
        self.small_epoch += 1;
        self.small_epoch
    }

    /// Allreduce of a value of at most [`Slots::max_bytes`](small::Slots::max_bytes) in
    /// shared memory (`small.rs`): deposit, wait for every rank's deposit, fold every rank's
    /// value in rank order. (Not the slice path with one element: that reads this rank's own
    /// value back and goes through a scratch buffer, 8–15 ns more per call between 2 ranks,
    /// 96–119 ns against 111–127, measured 2026-11-25.)
    fn allreduce_small<T: Pod>(
        &mut self,
        id: (u64, u64),
        value: T,
        op: &impl Fn(T, T) -> T,
    ) -> Result<T, CollectiveError> {
        let (me, n) = (self.rank, self.size());
        if n == 1 {
            return Ok(value);
        }
        let core = self.comm.core();
        let epoch = self.next_small_epoch();
        let calls = self.digest;
        small::deposit(core, me, epoch, id, calls, bytemuck::bytes_of(&value));
        small::wait_all(core, me, epoch, id, calls)?;
        let read = |r: usize| {
            if r == me {
                value
            } else {
                let mut v = T::zeroed();
                small::read(core, r, epoch, bytemuck::bytes_of_mut(&mut v));
                v
            }
        };
        let mut acc = read(0);
        for r in 1..n {
            acc = op(acc, read(r));
        }
        Ok(acc)
    }

    /// Element-wise allreduce of a slice of at most
    /// [`Slots::max_bytes`](small::Slots::max_bytes) in shared memory (`small.rs`).
    fn allreduce_slice_small<T: Pod>(
        &mut self,
        id: (u64, u64),
        data: &mut [T],
        op: &impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let (me, n) = (self.rank, self.size());
        let size = std::mem::size_of::<T>();
        if n == 1 {
            return Ok(());
        }
        let core = self.comm.core();
        let epoch = self.next_small_epoch();
        let bytes = std::mem::size_of_val(data);
        let calls = self.digest;
        small::deposit(core, me, epoch, id, calls, bytemuck::cast_slice(data));
        small::wait_all(core, me, epoch, id, calls)?;
        if size == 0 {
            return Ok(());
        }
        // Each rank's slice is read into the endpoint's scratch (16-byte aligned) and folded
        // into `data`, which holds rank 0's values first (this rank's own are read back from
        // its slot once `data` has changed).
        let mut partial = std::mem::take(&mut self.partial);
        partial.resize(partial.len().max(bytes.div_ceil(16)), 0);
        let scratch: &mut [u8] = &mut bytemuck::cast_slice_mut(&mut partial[..])[..bytes];
        for r in 0..n {
            if r == 0 && me == 0 {
                continue;
            }
            small::read(core, r, epoch, scratch);
            match bytemuck::try_cast_slice::<u8, T>(scratch) {
                Ok(theirs) if r == 0 => data.copy_from_slice(theirs),
                Ok(theirs) => {
                    for (a, &b) in data.iter_mut().zip(theirs) {
                        *a = op(*a, b);
                    }
                }
                Err(_) => {
                    // `T` is aligned beyond 16 bytes: element by element.
                    for (a, b) in data.iter_mut().zip(scratch.chunks_exact(size)) {
                        let b: T = bytemuck::pod_read_unaligned(b);
                        *a = if r == 0 { b } else { op(*a, b) };
                    }
                }
            }
        }
        self.partial = partial;
        Ok(())
    }

    /// Element-wise allreduce of a slice, in place, like `MPI_Allreduce` on an array: every
    /// rank passes a slice of the same length, and afterwards every rank's `data[i]` is
    /// `v0[i] ∘ v1[i] ∘ … ∘ vn-1[i]`, `vr` being rank `r`'s slice (rank order, so `op` must be
    /// associative but need not be commutative).
    ///
    /// From [`CommOptions::allreduce_direct_min_bytes`](crate::CommOptions::allreduce_direct_min_bytes)
    /// on, the ranks run a reduce-scatter and an allgather in shared memory: rank `r` combines
    /// the `r`-th `1/n` of the elements reading every rank's slice directly, then every rank
    /// copies the other parts from their owners, so each element is combined once and copied
    /// once per rank. Below it, slices of at most `allreduce_shared_max_bytes` go through
    /// shared memory as in
    /// [`allreduce`](Self::allreduce); longer ones are combined up the rank-ordered tree
    /// through the rings and the result is broadcast — except between two ranks, where each
    /// sends its slice to the other through the rings and both fold (when both streams fit in
    /// their rings at once: up to `capacity − 16` lines, 13 KiB with the default rings).
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast); slices of different lengths (or element sizes) on
    /// different ranks are a [`CollectiveError::Mismatch`] on the ranks that see it (and a
    /// poison on the others), never a read outside a slice. A panic in `op` poisons the
    /// communicator.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut team, mut comm) = (herald::Team::new(3)?, herald::Comm::new(3)?);
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let r = c.rank() as u64;
    ///     let mut data: Vec<u64> = (0..10_000).map(|i| i * 10 + r).collect();
    ///     c.allreduce_slice(&mut data, |a, b| a + b).unwrap();
    ///     // Rank order: a non-commutative op (decimal concatenation, for one-digit values
    ///     // and their concatenations: `b < 100` here) works.
    ///     let mut digits = vec![r + 1; 3];
    ///     c.allreduce_slice(&mut digits, |a, b| a * if b < 10 { 10 } else { 100 } + b)
    ///         .unwrap();
    ///     (data[7], digits)
    /// });
    /// assert_eq!(got, vec![(70 * 3 + 3, vec![123; 3]); 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn allreduce_slice<T: Pod>(
        &mut self,
        data: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let bytes = std::mem::size_of_val(data);
        let call = self.begin(CollectiveKind::AllreduceSlice, 0, bytes)?;
        let id = call.id();
        let direct_min = self.comm.options().allreduce_direct_min_bytes;
        let direct = bytes >= direct_min && std::mem::size_of::<T>() > 0;
        let result = if direct {
            self.allreduce_direct(id, data, &op)
        } else if bytes <= self.comm.core().small.max_bytes() {
            self.allreduce_slice_small(id, data, &op)
        } else if self.exchanges(bytes) {
            self.allreduce_exchange(id, data, &op)
        } else {
            self.reduce_slice_up(id, data, &op)
                .and_then(|()| self.broadcast_default(0, id, bytemuck::cast_slice_mut(data)))
        };
        call.end(result)
    }

    /// Whether an allreduce of `bytes` runs as one exchange ([`allreduce_exchange`]): two
    /// ranks, and a stream short enough that both sends fit in their rings at once. A ring's
    /// consumer publishes its position at least every `capacity / 4` lines (at most
    /// [`MAX_BATCH`](crate::runtime::MAX_BATCH)) and whenever it finds the ring empty; after a
    /// finished call at most that many consumed lines are unpublished, so a stream of at most
    /// `capacity − MAX_BATCH` lines never waits for room while its receiver is sending too.
    ///
    /// [`allreduce_exchange`]: Self::allreduce_exchange
    fn exchanges(&self, bytes: usize) -> bool {
        let capacity = self.comm.options().capacity;
        self.size() == 2 && stream_lines(bytes) + crate::runtime::MAX_BATCH <= capacity
    }

    /// Allreduce between two ranks as one exchange: each sends its slice to the other, then
    /// both fold `v0 ∘ v1` themselves (the same operands in the same order, so the same
    /// bytes). One stream's latency instead of the tree's two (up to rank 0, back down).
    fn allreduce_exchange<T: Pod>(
        &mut self,
        id: (u64, u64),
        data: &mut [T],
        op: &impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let (me, peer) = (self.rank, 1 - self.rank);
        let bytes = std::mem::size_of_val(data);
        let lines = 0..stream_lines(bytes);
        self.send_stream(peer, id, bytemuck::cast_slice(data), lines.clone())?;
        let mut partial = std::mem::take(&mut self.partial);
        let mut owned: Vec<T> = Vec::new();
        let theirs = element_scratch(&mut partial, &mut owned, data.len());
        let into: &mut [u8] = bytemuck::cast_slice_mut(theirs);
        let result = self.recv_stream(peer, id, into, lines);
        if result.is_ok() {
            let theirs: &[T] = bytemuck::cast_slice(into);
            for (a, &b) in data.iter_mut().zip(theirs) {
                *a = if me == 0 { op(*a, b) } else { op(b, *a) };
            }
        }
        self.partial = partial;
        result
    }

    /// Element-wise reduce of a slice to `root`, in place: the root's `data[i]` becomes
    /// `v0[i] ∘ v1[i] ∘ … ∘ vn-1[i]` (rank order; `op` associative). The other ranks' slices
    /// are left holding partial combinations (unspecified).
    ///
    /// # Errors
    ///
    /// As [`allreduce_slice`](Self::allreduce_slice).
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut team, mut comm) = (herald::Team::new(4)?, herald::Comm::new(4)?);
    /// let mut ranks = comm.ranks();
    /// let got = team.run_with(&mut ranks, |_, c| {
    ///     let mut data = [c.rank() as u32 + 1; 5];
    ///     c.reduce_slice(2, &mut data, |a, b| a * b).unwrap();
    ///     data
    /// });
    /// assert_eq!(got[2], [24; 5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_slice<T: Pod>(
        &mut self,
        root: usize,
        data: &mut [T],
        op: impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let bytes = std::mem::size_of_val(data);
        let call = self.begin(CollectiveKind::ReduceSlice, root, bytes)?;
        let id = call.id();
        let result = self.reduce_slice_up(id, data, &op).and_then(|()| {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(data);
            let lines = 0..stream_lines(bytes.len());
            match (root, self.rank) {
                (0, _) => Ok(()),
                (_, 0) => self.send_stream(root, id, bytes, lines),
                (root, me) if me == root => self.recv_stream(0, id, bytes, lines),
                _ => Ok(()),
            }
        });
        call.end(result)
    }

    /// Combines every rank's slice element-wise up the rank-ordered tree rooted at 0 in call
    /// `id`: afterwards `data` holds this rank's subtree partial (the full result on rank 0).
    fn reduce_slice_up<T: Pod>(
        &mut self,
        id: (u64, u64),
        data: &mut [T],
        op: &impl Fn(T, T) -> T,
    ) -> Result<(), CollectiveError> {
        let tree = self.comm.ordered_tree();
        let bytes = std::mem::size_of_val(data);
        let lines = 0..stream_lines(bytes);
        let mut partial = std::mem::take(&mut self.partial);
        let mut owned: Vec<T> = Vec::new();
        let mut result = Ok(());
        for (child, _) in tree.children(self.rank) {
            let theirs = element_scratch(&mut partial, &mut owned, data.len());
            let into: &mut [u8] = bytemuck::cast_slice_mut(theirs);
            result = self.recv_stream(child, id, into, lines.clone());
            if result.is_err() {
                break;
            }
            let theirs: &[T] = bytemuck::cast_slice(into);
            for (a, &b) in data.iter_mut().zip(theirs) {
                *a = op(*a, b);
            }
        }
        self.partial = partial;
        result?;
        if let Some(parent) = tree.parent(self.rank) {
            self.send_stream(parent, id, bytemuck::cast_slice(data), lines)?;
        }
        Ok(())
    }

    /// Inclusive prefix: rank `r` gets `v0 ∘ … ∘ vr` (rank order; `op` associative).
    ///
    /// # Errors
    ///
    /// As [`reduce`](Self::reduce).
    pub fn scan<T: Pod>(&mut self, value: T, op: impl Fn(T, T) -> T) -> Result<T, CollectiveError> {
        let call = self.begin(CollectiveKind::Scan, 0, std::mem::size_of::<T>())?;
        let result = self.scan_in(call.id(), value, &op);
        call.end(result)
    }

    fn scan_in<T: Pod>(
        &mut self,
        id: (u64, u64),
        value: T,
        op: &impl Fn(T, T) -> T,
    ) -> Result<T, CollectiveError> {
        let mut before = Vec::new();
        self.reduce_up(id, value, op, Some(&mut before))?;
        let tree = self.comm.ordered_tree();
        let left: Option<T> = match tree.parent(self.rank) {
            None => None,
            Some(parent) => Some(self.recv_value(parent, id)?),
        };
        for ((child, _), part) in tree.children(self.rank).zip(before) {
            let for_child = left.map_or(part, |l| op(l, part));
            self.send_value(child, id, &for_child)?;
        }
        Ok(left.map_or(value, |l| op(l, value)))
    }

    /// Every rank gets every rank's value, in rank order.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn allgather<T: Pod>(&mut self, value: T) -> Result<Vec<T>, CollectiveError> {
        let bytes = std::mem::size_of::<T>() * self.size();
        let call = self.begin(CollectiveKind::Allgather, 0, bytes)?;
        let result = self.allgather_in(call.id(), value);
        call.end(result)
    }

    fn allgather_in<T: Pod>(
        &mut self,
        id: (u64, u64),
        value: T,
    ) -> Result<Vec<T>, CollectiveError> {
        let (me, n) = (self.rank, self.size());
        let mut all = vec![T::zeroed(); n];
        all[me] = value;
        let tree = self.comm.ordered_tree();
        for (child, end) in tree.children(me) {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut all[child..end]);
            let lines = stream_lines(bytes.len());
            self.recv_stream(child, id, bytes, 0..lines)?;
        }
        if let Some(parent) = tree.parent(me) {
            let bytes: &[u8] = bytemuck::cast_slice(&all[me..tree.subtree_end(me)]);
            self.send_stream(parent, id, bytes, 0..stream_lines(bytes.len()))?;
        }
        self.broadcast_default(0, id, bytemuck::cast_slice_mut(&mut all))?;
        Ok(all)
    }

    /// Waits until every rank has called `barrier`.
    ///
    /// # Errors
    ///
    /// As [`broadcast`](Self::broadcast).
    pub fn barrier(&mut self) -> Result<(), CollectiveError> {
        let call = self.begin(CollectiveKind::Barrier, 0, 0)?;
        let id = call.id();
        // On the tree, not in shared memory: rank 0 leaves first and the release travels the
        // rings ahead of whatever rank 0 broadcasts next, so a broadcast right after a barrier
        // costs its receivers no second wait (in shared memory every rank left at once and
        // then waited for the broadcast: docs/runtime.md, "Small allreduce in shared memory").
        let result = self
            .reduce_up(id, (), &|(), ()| (), None)
            .and_then(|()| self.broadcast_default(0, id, &mut []));
        call.end(result)
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedTree;

    #[test]
    fn ordered_trees_partition_rank_ranges_in_order() {
        for radix in 2..7 {
            for n in 1..60 {
                let t = OrderedTree::new(n, radix);
                assert_eq!(t.subtree_end(0), n);
                for v in 0..n {
                    // The children's ranges tile v+1 .. end(v), left to right.
                    let mut next = v + 1;
                    for (c, end) in t.children(v) {
                        assert_eq!((c, t.parent(c)), (next, Some(v)), "R={radix} n={n} v={v}");
                        assert_eq!(end, t.subtree_end(c));
                        next = end;
                    }
                    assert_eq!(next, t.subtree_end(v), "R={radix} n={n} v={v}");
                }
                let flat = OrderedTree::new(n, n);
                assert_eq!(flat.children(0).count(), n - 1);
            }
        }
    }
}
