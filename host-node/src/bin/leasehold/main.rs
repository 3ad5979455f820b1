//! `leasehold`: a durable command queue (issue 7). Placeholder main while the
//! store lands; see `exec` for how one command runs.

mod exec;

fn main() {
    let _ = exec::Invocation::parse("true");
}
