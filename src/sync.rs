//! Small helpers for the few locks the daemon holds.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks a mutex, going on with its data if a panicking thread poisoned it: the data is plain values
/// that are always whole.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
