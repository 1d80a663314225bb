// SPDX-License-Identifier: GPL-2.0

//! Host tests of the send window: loss, rewind, probe, backoff, and the
//! read retries that the debug kernel once found the hard way.

use super::timer::{timeout_usecs, PROBE_FLOOR_SHARE};
use super::*;
use std::vec::Vec;

pub(super) const MTU: u32 = 1024;

/// One tick per millisecond, as a kernel with HZ=1000.
pub(super) struct Ms;

impl Clock for Ms {
    fn usecs_to_ticks(&self, usecs: u32) -> u64 {
        u64::from(usecs.div_ceil(1000))
    }
    fn ticks_to_usecs(&self, ticks: u64) -> u32 {
        (ticks * 1000) as u32
    }
}

#[derive(Debug)]
pub(super) struct Wr(pub(super) Track);

impl AsRef<Track> for Wr {
    fn as_ref(&self) -> &Track {
        &self.0
    }
}

impl AsMut<Track> for Wr {
    fn as_mut(&mut self) -> &mut Track {
        &mut self.0
    }
}

pub(super) type Window = SendWindow<Vec<Option<Wr>>>;

pub(super) fn window(slots: u32) -> Window {
    let ring = Ring::new(slots - 1, 64).unwrap();
    let mut v = Vec::new();
    v.resize_with(slots as usize, || None);
    SendWindow::new(v, ring, &Ms)
}

/// Takes a request of `kind` and `length` bytes once those before it
/// are sent, as the requester does.
pub(super) fn post(w: &mut Window, kind: Kind, length: u32) -> u32 {
    send_all(w, 0);
    assert_eq!(w.next_to_send(true, 16), Next::Take);
    let slot = w.next_slot();
    w.admit(Wr(Track::new(kind, length, MTU, w.next_psn())));
    w.check().unwrap();
    slot
}

/// Sends what the window allows at `now`, taking nothing new; returns
/// the PSNs sent and whether each asked for an ACK.
pub(super) fn send_all(w: &mut Window, now: u64) -> Vec<(u32, bool)> {
    send_all_of(w, now, true)
}

/// As [`send_all`], for requests that are `signalled` or not.
fn send_all_of(w: &mut Window, now: u64, signalled: bool) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    while let Next::Send(slot) = w.next_to_send(true, 16) {
        let p = w.next_packet(slot).unwrap();
        let t = w.get(slot).unwrap().as_ref();
        let awaited = t.kind().awaits_answer(p.n + 1 == t.npsn(), signalled);
        out.push((p.psn.get(), w.ack_req(true, awaited, p.psn, now)));
        w.sent(slot, p, true, now);
        w.check().unwrap();
    }
    out
}

/// Sends what the window allows with one read or atomic at a time; returns
/// the PSNs.
pub(super) fn send_one_rd_atomic(w: &mut Window) -> Vec<u32> {
    let mut sent = Vec::new();
    while let Next::Send(slot) = w.next_to_send(true, 1) {
        let p = w.next_packet(slot).unwrap();
        sent.push(p.psn.get());
        w.sent(slot, p, true, 0);
        w.check().unwrap();
    }
    sent
}

pub(super) fn psns(sent: &[(u32, bool)]) -> Vec<u32> {
    sent.iter().map(|&(psn, _)| psn).collect()
}

pub(super) fn done(w: &mut Window) -> usize {
    let n = core::iter::from_fn(|| w.pop_done_with(|_| ())).count();
    w.check().unwrap();
    n
}

/// Places response `n` of the read in `slot`, which must be taken.
pub(super) fn place(w: &mut Window, slot: u32, n: u32) {
    let first = w.get(slot).unwrap().as_ref().first_psn;
    let r = w.read_response(first + n, MTU as usize, MTU);
    assert!(matches!(r, ReadResponse::Place { slot: s, n: m, .. } if s == slot && m == n));
    w.read_placed(slot, n, 1);
    w.check().unwrap();
}

#[test]
fn acks_complete_in_order() {
    let mut w = window(8);
    for _ in 0..3 {
        post(&mut w, Kind::Data, 2 * MTU);
    }
    // The last packet of each message asks for an ACK.
    assert_eq!(send_all(&mut w, 0), [(4, false), (5, true)]);
    // An ACK in the middle of the second completes only the first.
    w.ack(Psn::new(2), 1);
    assert_eq!(done(&mut w), 1);
    assert!(w.expects(Psn::new(3)));
    w.ack(Psn::new(5), 2);
    assert_eq!(done(&mut w), 2);
    assert!(!w.expects(Psn::new(5)));
    assert_eq!(w.timer_usecs(14, &Ms), None);
}

/// Takes a one-packet request whose completion nobody awaits and sends it
/// at `now`; returns its PSN and whether it asked for an ACK.
fn post_unsignalled(w: &mut Window, now: u64) -> Vec<(u32, bool)> {
    assert_eq!(w.next_to_send(true, 16), Next::Take);
    w.admit(Wr(Track::new(Kind::Data, MTU, MTU, w.next_psn())));
    send_all_of(w, now, false)
}

#[test]
fn unsignalled_requests_are_asked_about_when_awaited() {
    let mut w = window(8);
    assert_eq!(post_unsignalled(&mut w, 0), [(0, false)]);
    assert_eq!(post_unsignalled(&mut w, 0), [(1, false)]);
    // A local operation behind them awaits their ACK: the last packet goes
    // again, asking for it.
    assert!(w.ask_for_ack(1));
    assert_eq!(send_all(&mut w, 1), [(1, true)]);
    // That one asked: nothing more to ask about.
    assert!(!w.ask_for_ack(2));
    w.ack(Psn::new(1), 2);
    assert_eq!(done(&mut w), 2);
    assert!(!w.ask_for_ack(3));
}

#[test]
fn unsignalled_tail_sent_again_asks() {
    let mut w = window(8);
    assert_eq!(post_unsignalled(&mut w, 0), [(0, false)]);
    // Nothing asked, no answer time measured: the QP's timeout sends it
    // again, asking.
    let timeout = u64::from(timeout_usecs(14).div_ceil(1000));
    assert_eq!(w.tick(timeout, 14, 7, &Ms), Timer::Retry);
    assert_eq!(send_all_of(&mut w, timeout, false), [(0, true)]);
    w.ack(Psn::new(0), timeout + 1);
    assert_eq!(done(&mut w), 1);
}

#[test]
fn sends_count_packets_sent_and_nothing_else() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 3 * MTU);
    assert_eq!(w.sends(), 0);
    assert_eq!(send_all(&mut w, 0).len(), 3);
    assert_eq!(w.sends(), 3);
    // A response that makes progress sends nothing by itself.
    w.ack(Psn::new(2), 1);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.sends(), 3);
    // Sent again after a timeout: counted again.
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 2);
    let timeout = u64::from(timeout_usecs(14).div_ceil(1000));
    assert_eq!(w.tick(2 + timeout, 14, 7, &Ms), Timer::Retry);
    assert_eq!(send_all(&mut w, 2 + timeout).len(), 1);
    assert_eq!(w.sends(), 5);
}

#[test]
fn window_bounds_what_is_in_flight() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 300 * MTU);
    let sent = send_all(&mut w, 0);
    assert_eq!(sent.len(), WINDOW as usize);
    // Every ACK_EVERY-th packet asks for an ACK, to open the window.
    assert_eq!(sent.iter().filter(|&&(_, ack)| ack).count(), 2);
    w.ack(Psn::new(9), 1);
    // Ten acknowledged: ten more go, as the window is at its widest.
    assert_eq!(send_all(&mut w, 1).len(), 10);
}

#[test]
fn sequence_nak_rewinds_and_halves_the_window() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 300 * MTU);
    send_all(&mut w, 0);
    w.seq_nak(Psn::new(4), 1);
    // Four acknowledged; sent again from the fifth, within half the
    // window, which the NAK's progress opened by one.
    let again = send_all(&mut w, 1);
    assert_eq!(again.first().map(|s| s.0), Some(4));
    assert_eq!(again.len(), (WINDOW + 1) as usize / 2);
}

#[test]
fn losses_never_shrink_the_window_below_its_floor() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 300 * MTU);
    send_all(&mut w, 0);
    for _ in 0..10 {
        w.seq_nak(Psn::new(0), 1);
    }
    assert_eq!(send_all(&mut w, 1).len(), MIN_WINDOW as usize);
}

#[test]
fn a_timeout_starts_again_small_and_doubles_back_to_half() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 600 * MTU);
    assert_eq!(send_all(&mut w, 0).len(), WINDOW as usize);
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(limit, 14, 7, &Ms), Timer::Retry);
    // From the oldest packet again, but only the smallest window of it.
    let again = send_all(&mut w, limit);
    assert_eq!(again.first().map(|s| s.0), Some(0));
    assert_eq!(again.len(), MIN_WINDOW as usize);
    // Each answer opens the window by what it acknowledges, up to half
    // the window before the timeout.
    let mut una = 0;
    for expected in [2 * MIN_WINDOW, 4 * MIN_WINDOW, WINDOW / 2, WINDOW / 2 + 1] {
        let high = una + w.window - 1;
        w.ack(Psn::new(high), limit + 1);
        una = high + 1;
        assert_eq!(w.window, expected);
        send_all(&mut w, limit + 1);
    }
}

#[test]
fn a_crowded_peer_halves_the_window_once_a_round_trip() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 600 * MTU);
    // The first ACK request, the 64th packet, is timed.
    send_all(&mut w, 0);
    let crowded = Ms.usecs_to_ticks(CROWDED_US);
    // Answered in time: it opens the window.
    w.ack(Psn::new(ACK_EVERY - 1), crowded);
    assert_eq!(w.window, WINDOW);
    // The next timed packet is the first ACK request sent after that
    // answer, the 192nd; the answers before it only open the window.
    send_all(&mut w, crowded);
    w.ack(Psn::new(2 * ACK_EVERY - 1), 2 * crowded + 1);
    assert_eq!(w.window, WINDOW);
    // Its answer takes longer: the window halves, once.
    w.ack(Psn::new(3 * ACK_EVERY - 1), 2 * crowded + 1);
    assert_eq!(w.window, WINDOW / 2);
    send_all(&mut w, 2 * crowded + 1);
    w.ack(Psn::new(3 * ACK_EVERY), 3 * crowded + 2);
    assert_eq!(w.window, WINDOW / 2 + 1);
}

#[test]
fn timeouts_retry_back_off_then_give_up() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 100);
    // Timeout code 14: 67.1 ms, 68 ticks.
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(limit, 68);
    assert_eq!(w.timer_usecs(14, &Ms), Some(timeout_usecs(14)));
    assert_eq!(w.tick(100 + limit - 1, 14, 2, &Ms), Timer::Idle);
    let mut now = 100 + limit;
    assert_eq!(w.tick(now, 14, 2, &Ms), Timer::Retry);
    assert_eq!(psns(&send_all(&mut w, now)), [0]);
    // The second timeout is twice as long.
    assert_eq!(w.tick(now + limit, 14, 2, &Ms), Timer::Idle);
    now += 2 * limit;
    assert_eq!(w.tick(now, 14, 2, &Ms), Timer::Retry);
    send_all(&mut w, now);
    now += 4 * limit;
    assert_eq!(w.tick(now, 14, 2, &Ms), Timer::GiveUp);
}

#[test]
fn backoff_is_capped_and_unwinds_as_requests_complete() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    let mut now = 0;
    for n in 0..5 {
        now += limit << (n as u8).min(MAX_BACKOFF);
        assert_eq!(w.tick(now, 14, 7, &Ms), Timer::Retry, "timeout {n}");
        send_all(&mut w, now);
    }
    assert_eq!(w.backoff, MAX_BACKOFF);
    w.ack(Psn::new(0), now);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.backoff, MAX_BACKOFF - 1);
}

/// A window whose peer answered in 2 ticks (a learnt timeout of 6), with
/// a message of `packets` sent at tick 10 from PSN 1: returns the probe's
/// floor, an eighth of timeout code 14, 9 ticks.
pub(super) fn sent_to_a_fast_peer(w: &mut Window, packets: u32) -> u64 {
    post(w, Kind::Data, MTU);
    send_all(w, 0);
    w.ack(Psn::new(0), 2);
    done(w);
    post(w, Kind::Data, packets * MTU);
    send_all(w, 10);
    let floor = Ms.usecs_to_ticks(timeout_usecs(14) / PROBE_FLOOR_SHARE);
    assert_eq!(floor, 9);
    floor
}

#[test]
fn a_silent_peer_is_probed_twice_per_progress() {
    let mut w = window(8);
    let floor = sent_to_a_fast_peer(&mut w, 1);
    assert_eq!(w.timer_usecs(14, &Ms), Some(floor as u32 * 1000));
    assert_eq!(w.tick(10 + floor - 1, 14, 0, &Ms), Timer::Idle);
    assert_eq!(w.tick(10 + floor, 14, 0, &Ms), Timer::Probe);
    assert_eq!(send_all(&mut w, 10 + floor), [(1, true)]);
    // Still silent: everything not acknowledged, which here is the same.
    assert_eq!(w.tick(10 + 2 * floor, 14, 0, &Ms), Timer::Probe);
    assert_eq!(psns(&send_all(&mut w, 10 + 2 * floor)), [1]);
    // Then the timeout decides, not counting the probes.
    assert_eq!(w.tick(10 + 3 * floor, 14, 0, &Ms), Timer::Idle);
    assert_eq!(w.timer_usecs(14, &Ms), Some(timeout_usecs(14)));
    let given_up = 10 + 2 * floor + Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(given_up - 1, 14, 0, &Ms), Timer::Idle);
    assert_eq!(w.tick(given_up, 14, 0, &Ms), Timer::GiveUp);
}

#[test]
fn a_tail_probe_is_the_last_packet_alone() {
    let mut w = window(8);
    let floor = sent_to_a_fast_peer(&mut w, 4);
    assert_eq!(w.tick(10 + floor, 14, 0, &Ms), Timer::Probe);
    // Not the four packets again: the last, asking for an ACK.
    assert_eq!(send_all(&mut w, 10 + floor), [(4, true)]);
    // The peer had them all, and says so.
    w.ack(Psn::new(4), 10 + floor + 2);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.timer_usecs(14, &Ms), None);
}

#[test]
fn a_tail_probe_draws_a_nak_for_what_was_lost() {
    let mut w = window(8);
    let floor = sent_to_a_fast_peer(&mut w, 4);
    assert_eq!(w.tick(10 + floor, 14, 0, &Ms), Timer::Probe);
    send_all(&mut w, 10 + floor);
    // The last two were lost: the probe finds the peer expecting PSN 3.
    w.seq_nak(Psn::new(3), 10 + floor + 2);
    assert_eq!(psns(&send_all(&mut w, 10 + floor + 2)), [3, 4]);
    // That was progress: the next silence is probed with the tail again.
    assert_eq!(w.tick(10 + 2 * floor + 2, 14, 0, &Ms), Timer::Probe);
    assert_eq!(send_all(&mut w, 10 + 2 * floor + 2), [(4, true)]);
}

#[test]
fn a_read_waiting_is_probed_from_the_oldest_unacknowledged() {
    let mut w = window(8);
    let floor = sent_to_a_fast_peer(&mut w, 2);
    post(&mut w, Kind::Read, 2 * MTU);
    send_all(&mut w, 10);
    // An ACK would not bring the read's responses back.
    assert_eq!(w.tick(10 + floor, 14, 0, &Ms), Timer::Probe);
    assert_eq!(psns(&send_all(&mut w, 10 + floor)), [1, 2, 3]);
    // And only once.
    assert_eq!(w.tick(10 + 2 * floor, 14, 0, &Ms), Timer::Idle);
}

#[test]
fn acks_past_a_read_never_answered_are_no_progress() {
    let mut w = window(8);
    post(&mut w, Kind::Read, 2 * MTU);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    // The peer acknowledges the write after the read each time it comes
    // again, and never answers the read: the retries still run out.
    let mut now = 0;
    while now < 10_000 {
        now += 1;
        match w.tick(now, 14, 2, &Ms) {
            Timer::Idle => {}
            Timer::GiveUp => break,
            _ => {
                send_all(&mut w, now);
                w.ack(Psn::new(2), now);
            }
        }
    }
    // Timeouts of 68, 136 and 272 ticks.
    assert_eq!(now, 68 + 136 + 272);
}

#[test]
fn no_probe_before_an_answer_time_is_known() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(limit - 1, 14, 1, &Ms), Timer::Idle);
}

#[test]
fn a_slow_peer_stretches_the_timeout() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    // An answer after 100 ticks: the learnt timeout is 300.
    w.ack(Psn::new(0), 100);
    done(&mut w);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 100);
    // Not the QP's 68 ticks: the peer's 300.
    assert_eq!(w.tick(100 + 299, 14, 1, &Ms), Timer::Idle);
    assert_eq!(w.tick(100 + 300, 14, 1, &Ms), Timer::Retry);
}

#[test]
fn rnr_nak_waits_then_resends() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    // The second was not received: the first was.
    assert_eq!(w.rnr_nak(Psn::new(1), 13, 3, 10, &Ms), RnrNak::Wait);
    assert_eq!(done(&mut w), 1);
    assert!(w.rnr_waiting());
    assert_eq!(w.timer_usecs(14, &Ms), Some(1000));
    // Code 13: 960 us, one tick.
    assert_eq!(w.tick(10, 14, 0, &Ms), Timer::Idle);
    assert_eq!(w.tick(11, 14, 0, &Ms), Timer::RnrDone);
    assert_eq!(psns(&send_all(&mut w, 11)), [1]);
}

#[test]
fn rnr_retry_runs_out_unless_infinite() {
    for (rnr_retry, limit) in [(2, Some(3)), (RNR_RETRY_FOREVER, None)] {
        let mut w = window(8);
        let slot = post(&mut w, Kind::Data, MTU);
        send_all(&mut w, 0);
        for n in 1..=10 {
            let nak = w.rnr_nak(Psn::new(0), 1, rnr_retry, n, &Ms);
            if Some(n) == limit {
                assert_eq!(nak, RnrNak::Exceeded(Some(slot)));
                break;
            }
            assert_eq!(nak, RnrNak::Wait, "NAK {n}");
            assert_eq!(w.tick(n + 1, 14, 0, &Ms), Timer::RnrDone);
            send_all(&mut w, n + 1);
        }
    }
}

#[test]
fn a_fatal_nak_names_the_request_and_acknowledges_those_before() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    let second = post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    assert_eq!(w.fatal_nak(Psn::new(1), 1), Some(second));
    assert_eq!(done(&mut w), 1);
    assert!(w.remove_failed(second).is_some());
    assert!(w.pop().is_none());
}

#[test]
fn a_rewind_never_moves_the_sender_forward() {
    let mut w = window(8);
    let first = post(&mut w, Kind::Read, 2 * MTU);
    let later = post(&mut w, Kind::Read, 4 * MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [2]);
    // The first read's first response is lost: its second shows it, and
    // it asks again.
    place(&mut w, first, 1);
    // Meanwhile the later read's responses arrive, with a gap.
    place(&mut w, later, 0);
    assert_eq!(done(&mut w), 0);
    place(&mut w, later, 2);
    // Both ask again, the first one first.
    assert_eq!(psns(&send_all(&mut w, 1)), [0, 3]);
}

#[test]
fn local_operations_complete_in_order_with_no_psn() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    assert_eq!(w.next_to_send(true, 16), Next::Send(0));
    send_all(&mut w, 0);
    assert_eq!(w.next_to_send(true, 16), Next::Take);
    w.admit(Wr(Track::local(w.next_psn())));
    assert_eq!(w.next_psn(), Psn::new(1));
    // Done, but behind the write.
    assert_eq!(done(&mut w), 0);
    w.ack(Psn::new(0), 1);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn psns_wrap() {
    let mut w = window(8);
    w.reset(Psn::new(Psn::MASK - 1));
    post(&mut w, Kind::Data, 4 * MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [Psn::MASK - 1, Psn::MASK, 0, 1]);
    w.seq_nak(Psn::new(0), 1);
    assert_eq!(psns(&send_all(&mut w, 1)), [0, 1]);
    assert!(w.expects(Psn::new(1)));
    w.ack(Psn::new(1), 2);
    assert_eq!(done(&mut w), 1);
}

#[test]
fn unreliable_requests_are_done_once_sent() {
    let mut w = window(8);
    post(&mut w, Kind::Data, 2 * MTU);
    // As after 2^32 - 1 packets: a UC or UD QP's count of packets that did
    // not ask for an ACK must not move, as nothing would ever reset it.
    w.noack = u32::MAX;
    while let Next::Send(slot) = w.next_to_send(false, 0) {
        let p = w.next_packet(slot).unwrap();
        assert!(!w.ack_req(false, true, p.psn, 0));
        w.sent(slot, p, false, 0);
    }
    assert_eq!(w.noack, u32::MAX);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.timer_usecs(14, &Ms), None);
}

#[test]
fn flushing_empties_the_window() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    let second = post(&mut w, Kind::Data, MTU);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    assert!(matches!(w.pop_before(second), Some(Some(_))));
    assert!(w.pop_before(second).is_none());
    assert!(matches!(w.pop(), Some(Some(_))));
    assert!(matches!(w.pop(), Some(Some(_))));
    assert!(w.pop().is_none());
    w.flushed();
    assert_eq!(w.timer_usecs(14, &Ms), None);
    assert_eq!(w.next_to_send(true, 16), Next::Take);
}

#[test]
fn one_slot_stays_free() {
    // Four slots: a fourth request would make the window look empty.
    let mut w = window(4);
    for _ in 0..3 {
        post(&mut w, Kind::Data, MTU);
    }
    send_all(&mut w, 0);
    assert_eq!(w.next_to_send(true, 16), Next::Wait);
    w.ack(Psn::new(0), 1);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.next_to_send(true, 16), Next::Take);
}
