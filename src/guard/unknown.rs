//! Commands that cannot be known before they run ([`super::UNKNOWN`]): a program that comes from a
//! variable or from input (`$CMD`, `xargs sh -c`, `cat x | python3`).

use super::Finding;
use super::folders::Seen;

pub(super) fn judge(seen: &Seen, found: &mut Vec<Finding>) {
    let _ = (seen, found);
}
