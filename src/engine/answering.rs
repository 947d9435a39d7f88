//! What a fire's answer need not wait for, done once it is written: its record described and handed to
//! the journal's writer, its event let go, its hooks' descriptors closed and what their processes left
//! behind signalled. A fire polled to be answered by its connection ([`answer_first`] in place,
//! [`AnsweredAfter`] as a task of its own) leaves these in the [`AfterAnswer`] it gives back; anywhere
//! else they are done at once.

use std::cell::{Cell, RefCell};

use serde_json::{Map, Value};

use crate::record::{self, Record};

thread_local! {
    /// Set while a fire is polled to be answered by its connection ([`answer_first`]).
    static ANSWERING_FIRST: Cell<bool> = const { Cell::new(false) };
    /// What the fires decided meanwhile left for after their answers.
    static LEFT: RefCell<Vec<Left>> = const { RefCell::new(Vec::new()) };
    /// What their hooks' runs left ([`after_answer`]).
    static WORK: RefCell<Vec<Work>> = const { RefCell::new(Vec::new()) };
}

/// Something a hook's run leaves to do once its fire is answered ([`after_answer`]).
type Work = Box<dyn FnOnce() + Send>;

/// A fire's end left for after its answer: its record to describe and hand over, its event to let go.
pub(crate) struct Left {
    pub record: Option<Box<Record>>,
    /// What the event says is not in the record yet (`FireRecord::begin_lazily`).
    pub undescribed: bool,
    pub event: Map<String, Value>,
}

impl Left {
    fn finish(self) {
        if let Some(mut record) = self.record
            && let Some(recorder) = record::get()
        {
            if self.undescribed {
                record.describe_event(&self.event, recorder.full_inputs());
            }
            recorder.note_boxed(record);
        }
        drop(self.event);
    }
}

/// Whether a fire is being polled to be answered by its connection: what it leaves for after its
/// answer waits for it.
pub(crate) fn answering() -> bool {
    ANSWERING_FIRST.with(Cell::get)
}

/// `left` finished once the answer of the fire being polled is written, when it is polled to be
/// answered; else now.
pub(crate) fn after_answer_record(left: Left) {
    if answering() {
        LEFT.with(|waiting| waiting.borrow_mut().push(left));
    } else {
        left.finish();
    }
}

/// `work` done once the answer of the fire being polled is written, when it is polled to be answered
/// ([`answer_first`], [`AnsweredAfter`]); else now. For what the answer need not wait for: a hook's
/// descriptors closed, what its process left behind signalled. Never lost: an [`AfterAnswer`] dropped
/// unfinished does it.
pub(crate) fn after_answer(work: impl FnOnce() + Send + 'static) {
    if answering() {
        WORK.with(|waiting| waiting.borrow_mut().push(Box::new(work)));
    } else {
        work();
    }
}

/// Runs `decide` (a first poll of a fire, on the connection's task) so that a fire it decides leaves
/// the part of its ending that its client need not wait for (what the event says written into its
/// record, the record handed to the journal's writer, the event let go) in the [`AfterAnswer`] given
/// back, to be finished once the answer is written: a fire's record then costs its answer's latency
/// little more than taking a record and setting its verdict.
pub fn answer_first<T>(decide: impl FnOnce() -> T) -> (T, AfterAnswer) {
    /// Unset however `decide` ends, a panic included.
    struct Answering;
    impl Drop for Answering {
        fn drop(&mut self) {
            ANSWERING_FIRST.with(|answering| answering.set(false));
        }
    }
    ANSWERING_FIRST.with(|answering| answering.set(true));
    let answering = Answering;
    let decided = decide();
    drop(answering);
    let left = LEFT.with(|left| std::mem::take(&mut *left.borrow_mut()));
    let work = WORK.with(|work| std::mem::take(&mut *work.borrow_mut()));
    (decided, AfterAnswer { left, work })
}

/// What fires decided in place left for after their answers ([`answer_first`]). Finished by
/// [`AfterAnswer::finish`], or when dropped, however the connection goes on: never lost.
#[must_use = "finish it once the answer is written"]
#[derive(Default)]
pub struct AfterAnswer {
    left: Vec<Left>,
    work: Vec<Work>,
}

impl AfterAnswer {
    pub fn finish(mut self) {
        self.finish_left();
    }

    fn finish_left(&mut self) {
        for work in self.work.drain(..) {
            work();
        }
        if self.left.capacity() == 0 {
            return; // nothing left, nor room to keep (an answer that was not a fire's)
        }
        for left in self.left.drain(..) {
            left.finish();
        }
        // The list's room kept for the next fire's.
        let emptied = std::mem::take(&mut self.left);
        LEFT.with(|left| {
            let mut left = left.borrow_mut();
            if left.capacity() < emptied.capacity() {
                *left = emptied;
            }
        });
    }
}

/// A fire polled as a task of its own (it waits for its hooks) and answered by its connection: what the
/// poll that decides it leaves for after its answer (its record, what its last hooks' runs left:
/// [`after_answer`]) comes back with its output, for the connection to finish once the answer is
/// written, as [`answer_first`] leaves it for a fire decided in place. Between the exit of the hook it
/// waited for and its answer there is then nothing the answer need not wait for. What a poll that does
/// not decide it leaves (a hook that ended while others run) is finished at the end of that poll: its
/// answer may be a while yet.
pub struct AnsweredAfter<F>(pub F);

impl<F: Future + Unpin> Future for AnsweredAfter<F> {
    type Output = (F::Output, AfterAnswer);

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let fire = std::pin::Pin::new(&mut self.0);
        match answer_first(|| fire.poll(context)) {
            (std::task::Poll::Ready(output), after) => std::task::Poll::Ready((output, after)),
            (std::task::Poll::Pending, after) => {
                after.finish();
                std::task::Poll::Pending
            }
        }
    }
}

impl Drop for AfterAnswer {
    fn drop(&mut self) {
        self.finish_left();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};

    /// A fire that leaves one piece of work at each poll, and is decided at its `polls`-th.
    struct Leaving {
        polls: usize,
        done: Arc<AtomicUsize>,
    }

    impl Future for Leaving {
        type Output = &'static str;

        fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<&'static str> {
            let done = self.done.clone();
            after_answer(move || {
                done.fetch_add(1, Ordering::SeqCst);
            });
            self.polls -= 1;
            if self.polls == 0 {
                Poll::Ready("answer")
            } else {
                Poll::Pending
            }
        }
    }

    fn poll<F: Future + Unpin>(fire: &mut AnsweredAfter<F>) -> Poll<(F::Output, AfterAnswer)> {
        std::pin::Pin::new(fire).poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn work_a_deciding_poll_leaves_waits_for_the_answer_and_an_undeciding_polls_is_done_with_it() {
        let done = Arc::new(AtomicUsize::new(0));
        let mut fire = AnsweredAfter(Leaving {
            polls: 2,
            done: done.clone(),
        });
        assert!(poll(&mut fire).is_pending());
        assert_eq!(
            done.load(Ordering::SeqCst),
            1,
            "the first poll's work, at its end"
        );
        let Poll::Ready((answer, after)) = poll(&mut fire) else {
            panic!("decided at the second poll");
        };
        assert_eq!(answer, "answer");
        assert_eq!(
            done.load(Ordering::SeqCst),
            1,
            "the deciding poll's, not yet"
        );
        after.finish();
        assert_eq!(done.load(Ordering::SeqCst), 2, "once the answer is written");
        assert!(
            !answering(),
            "polled, nothing is held for an answer any more"
        );
        after_answer({
            let done = done.clone();
            move || {
                done.fetch_add(1, Ordering::SeqCst);
            }
        });
        assert_eq!(
            done.load(Ordering::SeqCst),
            3,
            "outside a fire's poll, at once"
        );
    }

    #[test]
    fn work_left_for_an_answer_never_written_is_done_when_it_is_dropped() {
        let done = Arc::new(AtomicUsize::new(0));
        let mut fire = AnsweredAfter(Leaving {
            polls: 1,
            done: done.clone(),
        });
        let Poll::Ready((_, after)) = poll(&mut fire) else {
            panic!("decided at once");
        };
        assert_eq!(done.load(Ordering::SeqCst), 0);
        drop(after);
        assert_eq!(done.load(Ordering::SeqCst), 1);
    }
}
