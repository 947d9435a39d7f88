//! The memory a client can make the daemon hold: the requests it has sent and the answers it has not yet
//! read. Each connection has a budget, and all of them together have one; past either, the daemon stops
//! reading requests (of that client, or of every client) until answers are read and memory is freed. A
//! client that pipelines fires and never reads its answers then holds up only itself, and the daemon never
//! grows until the kernel kills it (leaving its socket behind, and every agent without its guard).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::limits::{ANSWER_RESERVE, CONNECTION_BUDGET, LARGE_LINES_AT_ONCE, TOTAL_BUDGET};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The daemon-wide count, and the permits for reading large lines.
#[derive(Debug)]
pub struct Memory {
    held: AtomicUsize,
    freed: Notify,
    large_lines: Arc<Semaphore>,
    decoders: Arc<Semaphore>,
}

/// Requests decoded on blocking threads at once: more would only share the same cores, and starve the
/// runtime's one thread that serves every client.
const DECODERS: usize = 2;

impl Default for Memory {
    fn default() -> Self {
        Memory {
            held: AtomicUsize::new(0),
            freed: Notify::new(),
            large_lines: Arc::new(Semaphore::new(LARGE_LINES_AT_ONCE)),
            decoders: Arc::new(Semaphore::new(DECODERS)),
        }
    }
}

impl Memory {
    /// Bytes held by every connection together.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Whether new requests may be read now.
    pub fn has_room(&self) -> bool {
        self.held() < TOTAL_BUDGET
    }

    /// Resolves when memory has been freed (some answer was read, some fire ended) after it was made;
    /// call `enable` on it before looking at the budget, so that nothing freed in between is missed.
    pub fn freed(&self) -> tokio::sync::futures::Notified<'_> {
        self.freed.notified()
    }

    /// Permission to buffer one large line; released when the line is whole (or the connection ends).
    pub async fn large_line(&self) -> OwnedSemaphorePermit {
        self.large_lines
            .clone()
            .acquire_owned()
            .await
            .expect("the large-line permits are never closed")
    }

    /// Permission to decode a request on a blocking thread; held until it is decoded.
    pub async fn decoder(&self) -> OwnedSemaphorePermit {
        self.decoders
            .clone()
            .acquire_owned()
            .await
            .expect("the decoder permits are never closed")
    }

    fn charge(&self, bytes: usize) {
        self.held.fetch_add(bytes, Ordering::Relaxed);
    }

    fn release(&self, bytes: usize) {
        let before = self.held.fetch_sub(bytes, Ordering::Relaxed);
        // Only connections held back by the daemon-wide budget wait to be told: wake them when it has
        // room again (a connection held back by its own budget frees its own memory).
        if before >= TOTAL_BUDGET && before - bytes < TOTAL_BUDGET {
            self.freed.notify_waiters();
        }
    }
}

/// One connection's share: what it holds, counted in its own budget and in the daemon's.
#[derive(Debug)]
pub struct Account {
    memory: Arc<Memory>,
    held: usize,
}

impl Account {
    pub fn new(memory: Arc<Memory>) -> Account {
        Account { memory, held: 0 }
    }

    /// Whether this connection may read another request now. A connection that holds nothing may always
    /// read one: a client that asks one thing at a time (the relay, an agent) is never held back by what
    /// others hold, and what it adds past the daemon's budget is one request per connection.
    pub fn has_room(&self) -> bool {
        self.held == 0 || (self.held < CONNECTION_BUDGET && self.memory.has_room())
    }

    pub fn charge(&mut self, bytes: usize) {
        self.held += bytes;
        self.memory.charge(bytes);
    }

    pub fn release(&mut self, bytes: usize) {
        let bytes = bytes.min(self.held);
        self.held -= bytes;
        self.memory.release(bytes);
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        self.memory.release(self.held);
    }
}

/// What a request line is charged while its fire is pending: the line, its decoded form, and room for its
/// answer. A decoded event is a tree of values: each `[`, `{`, `,` and `:` outside strings is about one
/// more node, and a node costs tens of bytes beyond its text.
pub fn request_cost(line: &[u8]) -> usize {
    const PER_NODE: usize = 64;
    line.len() * 2 + structural_bytes(line) * PER_NODE + ANSWER_RESERVE
}

/// The bytes `[`, `{`, `,`, `:` of a JSON text outside its strings.
fn structural_bytes(line: &[u8]) -> usize {
    let (mut count, mut in_string, mut escaped) = (0, false, false);
    for &byte in line {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'[' | b'{' | b',' | b':' => count += 1,
                _ => {}
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_is_counted_outside_strings_only() {
        assert_eq!(structural_bytes(br#"{"a":[1,2],"b":"x,y:{[\"]"}"#), 6);
        assert_eq!(structural_bytes(b"[0,0,0,0]"), 4);
        // An escaped backslash does not escape the quote after it: the comma is outside.
        assert_eq!(structural_bytes(br#""\\",""#), 1);
    }

    #[test]
    fn an_account_gives_back_what_it_held_when_dropped() {
        let memory = Arc::new(Memory::default());
        let mut account = Account::new(memory.clone());
        account.charge(100);
        assert_eq!(memory.held(), 100);
        account.release(30);
        assert_eq!(memory.held(), 70);
        drop(account);
        assert_eq!(memory.held(), 0);
    }

    #[test]
    fn a_connection_past_its_budget_reads_no_more() {
        let memory = Arc::new(Memory::default());
        let mut account = Account::new(memory.clone());
        assert!(account.has_room());
        account.charge(CONNECTION_BUDGET);
        assert!(!account.has_room());
        let mut other = Account::new(memory.clone());
        assert!(other.has_room(), "one connection's budget is its own");
        other.charge(1);
        let mut others: Vec<Account> = (0..8).map(|_| Account::new(memory.clone())).collect();
        for account in &mut others {
            account.charge(CONNECTION_BUDGET - 1);
        }
        assert!(
            !other.has_room(),
            "past the daemon's budget, a connection holding something waits"
        );
        assert!(
            Account::new(memory.clone()).has_room(),
            "a connection holding nothing may always ask one thing"
        );
        drop(others);
        account.release(1);
        assert!(account.has_room());
    }
}
