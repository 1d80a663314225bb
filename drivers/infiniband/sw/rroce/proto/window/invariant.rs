// SPDX-License-Identifier: GPL-2.0

//! The window's invariants, checked: what the host tests and the fuzz
//! target verify after every event.

use super::timer::PROBES;
use super::{Kind, SendWindow, Track, MAX_BACKOFF, MIN_WINDOW, WINDOW};
use core::ops::DerefMut;

impl<E, S> SendWindow<S>
where
    E: AsRef<Track> + AsMut<Track>,
    S: DerefMut<Target = [Option<E>]>,
{
    /// Checks the invariants stated on [`SendWindow`]; the host tests and the fuzz target
    /// call it after every event. The error says which one broke.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let mask = self.ring.index_mask();
        if (self.head | self.cur | self.next) & !mask != 0 {
            return Err("a slot index outside the ring");
        }
        if self.ring.count(self.cur, self.head) > self.ring.count(self.next, self.head) {
            return Err("cur past next");
        }
        let mut i = self.next;
        while i != self.head {
            if self.get(i).is_some() {
                return Err("a request outside head..next");
            }
            i = self.ring.next(i);
        }
        let mut i = self.head;
        while i != self.cur {
            if self
                .get(i)
                .is_some_and(|e| e.as_ref().sent < e.as_ref().request_packets())
            {
                return Err("a request before cur not all sent");
            }
            i = self.ring.next(i);
        }
        let mut end = None;
        for t in self.taken() {
            if end.is_some_and(|end| end != t.first_psn) {
                return Err("requests' PSNs not consecutive");
            }
            end = Some(t.first_psn + t.npsn);
        }
        if end.is_some_and(|end| end != self.psn) {
            return Err("the last request does not end at psn");
        }
        if self.high.after(self.psn) || self.una.after(self.psn) {
            return Err("high or una after psn");
        }
        if let Some(first) = self.taken().next() {
            if self.una.before(first.first_psn) {
                return Err("una before the oldest request");
            }
        }
        if let Some(t) = self.taken().find(|t| !t.done) {
            let n = if t.kind == Kind::Read { t.got } else { t.acked };
            if self.una.after(t.first_psn + n) {
                return Err("una past what the first request not done got");
            }
        }
        if !(MIN_WINDOW..=WINDOW).contains(&self.window)
            || !(MIN_WINDOW..=WINDOW).contains(&self.threshold)
        {
            return Err("window or its threshold out of bounds");
        }
        if self.backoff > MAX_BACKOFF || self.probes > PROBES {
            return Err("backoff or probes out of bounds");
        }
        Ok(())
    }
}
