import sys
v=sys.argv[1]
p='src/runtime/collective/rank.rs'
s=open(p).read()
def rep(old,new):
    global s
    assert s.count(old)==1,(old)
    s=s.replace(old,new)
if v=='X1':
    rep("core.publish(self.rank, self.seq, header);","if bytes > 48 { core.publish(self.rank, self.seq, header); }")
if v=='X2':
    rep("if wait::thread_aborted() {","if bytes > 48 && wait::thread_aborted() {")
    rep("if token != self.driver {","if bytes > 48 && token != self.driver {")
    rep("let token = wait::thread_token();","let token = if bytes > 48 { wait::thread_token() } else { self.driver };")
if v=='X3':
    rep("""        let result = if let Some(class) = self.comm.timed_class(buf.len()) {
            self.broadcast_timed(class, root, call.id(), buf)""","""        let result = if buf.len() <= 48 {
            self.broadcast_posted(root, call.id(), buf)
        } else if let Some(class) = self.comm.timed_class(buf.len()) {
            self.broadcast_timed(class, root, call.id(), buf)""")
if v=='X4':
    rep("""        };
        call.end(result)
    }

    /// A broadcast of timed class""","""        };
        if buf.len() <= 48 { std::mem::forget(call); return result; }
        call.end(result)
    }

    /// A broadcast of timed class""")
open(p,'w').write(s)
