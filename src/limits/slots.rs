//! What the guard's tallies and the sizing chart share: how many recent periods they keep, and
//! how a request finds its event's fixed slot without a lock or a map.

use std::sync::OnceLock;

/// Periods the guard's tally and the sizing history remember, the current one included.
pub const RECENT_PERIODS: usize = 24;

/// The slot of `event` among fixed ones, claiming a free one when `claim` says so: no lock,
/// no allocation; `None` once every slot belongs to another event.
pub fn find_slot<'a, T>(
    slots: &'a [T],
    event: &'static str,
    claim: bool,
    name: impl Fn(&T) -> &OnceLock<&'static str>,
) -> Option<&'a T> {
    for slot in slots {
        match name(slot).get() {
            Some(e) if std::ptr::eq(*e, event) || *e == event => return Some(slot),
            Some(_) => continue,
            None if !claim => return None,
            None => {
                if *name(slot).get_or_init(|| event) == event {
                    return Some(slot);
                }
            }
        }
    }
    None
}
