//! What a fire's answer need not wait for, done once it is written: the fire's record described and
//! handed to the journal's writer (which may wake that thread: a system call, and a thread more
//! for the cores the answer's client wakes on), and its event let go. A fire polled to be answered
//! by its connection ([`answer_first`] in place, [`AnsweredAfter`] as a task of its own) leaves these
//! in the [`AfterAnswer`] it gives back; anywhere else they are done at once.

use std::cell::{Cell, RefCell};

use serde_json::{Map, Value};

use crate::record::{self, Record};

thread_local! {
    /// Set while a fire is polled to be answered by its connection ([`answer_first`]).
    static ANSWERING_FIRST: Cell<bool> = const { Cell::new(false) };
    /// What the fires decided meanwhile left for after their answers.
    static LEFT: RefCell<Vec<Left>> = const { RefCell::new(Vec::new()) };
}

/// A fire's end left for after its answer: its record to describe and hand over, its event to let go.
pub(crate) struct Left {
    pub record: Option<Box<Record>>,
    /// What the event says is not in the record yet (`FireRecord::begin_lazily`).
    pub undescribed: bool,
    pub event: Map<String, Value>,
}

impl Left {
    fn finish(self) {
        #[cfg(test)]
        tests::FINISHED.with(|finished| finished.set(finished.get() + 1));
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
pub(crate) fn after_answer(left: Left) {
    if answering() {
        LEFT.with(|waiting| waiting.borrow_mut().push(left));
    } else {
        left.finish();
    }
}

/// Runs `decide` (a poll of a fire to be answered by its connection) so that a fire it decides leaves
/// the part of its ending that its client need not wait for (what the event says written into its
/// record, the record handed to the journal's writer, the event let go) in the [`AfterAnswer`] given
/// back, to be finished once the answer is written: a fire's record then costs its answer's latency
/// little more than taking a record and setting its verdict.
pub fn answer_first<T>(decide: impl FnOnce() -> T) -> (T, AfterAnswer) {
    /// Unset however `decide` ends. On a panic (a task's poll: tokio catches it), what was left is
    /// finished now: its fire has no answer to wait for.
    struct Answering;
    impl Drop for Answering {
        fn drop(&mut self) {
            ANSWERING_FIRST.with(|answering| answering.set(false));
            if std::thread::panicking() {
                let _ = LEFT.try_with(|left| AfterAnswer(std::mem::take(&mut *left.borrow_mut())));
            }
        }
    }
    ANSWERING_FIRST.with(|answering| answering.set(true));
    let answering = Answering;
    let decided = decide();
    drop(answering);
    let left = LEFT.with(|left| std::mem::take(&mut *left.borrow_mut()));
    (decided, AfterAnswer(left))
}

/// What fires decided in place left for after their answers ([`answer_first`]). Finished by
/// [`AfterAnswer::finish`], or when dropped, however the connection goes on: never lost.
#[must_use = "finish it once the answer is written"]
#[derive(Default)]
pub struct AfterAnswer(Vec<Left>);

impl AfterAnswer {
    pub fn finish(mut self) {
        self.finish_left();
    }

    fn finish_left(&mut self) {
        if self.0.capacity() == 0 {
            return; // nothing left, nor room to keep (an answer that was not a fire's)
        }
        for left in self.0.drain(..) {
            left.finish();
        }
        // The list's room kept for the next fire's, where none is waiting in it.
        let emptied = std::mem::take(&mut self.0);
        let _ = LEFT.try_with(|left| {
            let mut left = left.borrow_mut();
            if left.is_empty() && left.capacity() < emptied.capacity() {
                *left = emptied;
            }
        });
    }
}

impl Drop for AfterAnswer {
    fn drop(&mut self) {
        self.finish_left();
    }
}

/// A fire polled as a task of its own (it waits for its hooks) and answered by its connection: what
/// the poll that decides it leaves for after its answer comes back with its output, for the connection
/// to finish once the answer is written, as [`answer_first`] leaves it for a fire decided in place:
/// between the exit of the hook a fire waited for and its answer, its record is not handed over. What
/// a poll that does not decide it leaves is finished at the end of that poll.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll, Waker};

    /// A fire that leaves its end for after its answer at each poll, decided at its `polls`-th.
    struct Leaving {
        polls: usize,
    }

    impl Future for Leaving {
        type Output = &'static str;

        fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<&'static str> {
            after_answer(end());
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

    thread_local! {
        /// How many fires' ends this thread has finished.
        pub static FINISHED: Cell<usize> = const { Cell::new(0) };
    }

    fn waiting() -> usize {
        LEFT.with(|left| left.borrow().len())
    }

    fn finished() -> usize {
        FINISHED.with(Cell::get)
    }

    fn end() -> Left {
        Left {
            record: None,
            undescribed: false,
            event: Map::new(),
        }
    }

    #[test]
    fn what_a_deciding_poll_leaves_comes_with_the_answer_and_an_undeciding_polls_is_done_with_it() {
        let mut fire = AnsweredAfter(Leaving { polls: 2 });
        assert!(poll(&mut fire).is_pending());
        assert_eq!(finished(), 1, "the first poll's, finished at its end");
        let Poll::Ready((answer, after)) = poll(&mut fire) else {
            panic!("decided at the second poll");
        };
        assert_eq!(answer, "answer");
        assert_eq!(finished(), 1, "the deciding poll's, not yet");
        assert!(!answering(), "polled, nothing is held for an answer");
        after.finish();
        assert_eq!(finished(), 2, "once the answer is written");
        assert_eq!(waiting(), 0);

        // Outside a fire's poll, at once; and an answer never written finishes what it holds.
        after_answer(end());
        assert_eq!(finished(), 3);
        let mut fire = AnsweredAfter(Leaving { polls: 1 });
        let Poll::Ready((_, after)) = poll(&mut fire) else {
            panic!("decided at once");
        };
        drop(after);
        assert_eq!(finished(), 4);
    }

    #[test]
    fn what_a_poll_that_panics_left_is_finished_not_left_for_another_fire() {
        let mut fire = AnsweredAfter(std::future::poll_fn(|_| -> Poll<()> {
            after_answer(end());
            panic!("a fire's bug");
        }));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll(&mut fire)));
        assert!(panicked.is_err());
        assert!(!answering());
        assert_eq!(waiting(), 0, "left for whichever fire came next");
        assert_eq!(finished(), 1);
    }
}
