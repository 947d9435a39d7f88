//! Deletes: `rm -r`, `rm -rf`, `find -delete`, `find -exec rm`, `shred -r`, and what a one-liner of
//! another language deletes (read by [`crate::shell`] as the `rm` it amounts to), judged by where they
//! reach: the root, a top-level folder, the home folder ([`super::DELETE_ROOT`]), the project
//! ([`super::DELETE_PROJECT`]), or anywhere outside the project and the temporary folders
//! ([`super::DELETE_OUTSIDE`]).

use super::Finding;
use super::folders::Seen;

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    let _ = (seen, found);
}
