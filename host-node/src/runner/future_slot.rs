//! Where the driver keeps one future of a slot (the claim, or an item's
//! perform, renewal or finish) between polls.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A future's place, boxed on its first use and reused after: `Pin::set`
/// swaps the next future in, so nothing is allocated per item, and a kind
/// of future a job never makes (a renewal without a heartbeat, a finish
/// without the settle phase) takes no memory.
pub(crate) struct FutureSlot<F>(Option<Pin<Box<Option<F>>>>);

impl<F: Future> FutureSlot<F> {
    pub(crate) fn new() -> Self {
        FutureSlot(None)
    }

    /// Puts `future` in (dropping the one there, if any).
    pub(crate) fn start(&mut self, future: F) {
        match &mut self.0 {
            Some(place) => place.set(Some(future)),
            None => self.0 = Some(Box::pin(Some(future))),
        }
    }

    /// Drops the future there, if any; the place is kept.
    pub(crate) fn clear(&mut self) {
        if let Some(place) = &mut self.0 {
            place.set(None);
        }
    }

    /// Polls the future there with `waker`: its output once it is ready
    /// (and the place is emptied), `None` while it is pending or when there
    /// is none.
    pub(crate) fn poll(&mut self, waker: &Waker) -> Option<F::Output> {
        let place = self.0.as_mut()?;
        let mut cx = Context::from_waker(waker);
        let output = match place.as_mut().as_pin_mut()?.poll(&mut cx) {
            Poll::Ready(output) => output,
            Poll::Pending => return None,
        };
        place.set(None);
        Some(output)
    }
}
