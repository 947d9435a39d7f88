//! Git that loses work: [`super::GIT_DISCARD`] and [`super::GIT_HISTORY`].

use super::Finding;
use super::folders::Seen;

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    let _ = (seen, found);
}
