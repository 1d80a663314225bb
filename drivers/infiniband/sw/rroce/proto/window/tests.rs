// SPDX-License-Identifier: GPL-2.0

//! Host tests of the send window: loss, rewind, probe, backoff, and the
//! read retries that the debug kernel once found the hard way.

use super::timer::{timeout_usecs, PROBE_FLOOR_SHARE};
use super::*;
use std::vec::Vec;

const MTU: u32 = 1024;

/// One tick per millisecond, as a kernel with HZ=1000.
struct Ms;

impl Clock for Ms {
    fn usecs_to_ticks(&self, usecs: u32) -> u64 {
        u64::from(usecs.div_ceil(1000))
    }
    fn ticks_to_usecs(&self, ticks: u64) -> u32 {
        (ticks * 1000) as u32
    }
}

#[derive(Debug)]
struct Wr(Track);

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

type Window = SendWindow<Vec<Option<Wr>>>;

fn window(slots: u32) -> Window {
    let ring = Ring::new(slots - 1, 64).unwrap();
    let mut v = Vec::new();
    v.resize_with(slots as usize, || None);
    SendWindow::new(v, ring)
}

/// Takes a request of `kind` and `length` bytes once those before it
/// are sent, as the requester does.
fn post(w: &mut Window, kind: Kind, length: u32) -> u32 {
    send_all(w, 0);
    assert_eq!(w.next_to_send(true, 16), Next::Take);
    let slot = w.next_slot();
    w.admit(Wr(Track::new(kind, length, MTU, w.next_psn())));
    slot
}

/// Sends what the window allows at `now`, taking nothing new; returns
/// the PSNs sent and whether each asked for an ACK.
fn send_all(w: &mut Window, now: u64) -> Vec<(u32, bool)> {
    let mut out = Vec::new();
    while let Next::Send(slot) = w.next_to_send(true, 16) {
        let p = w.next_packet(slot).unwrap();
        let t = w.get(slot).unwrap().as_ref();
        let ends = t.kind() != Kind::Data || p.n + 1 == t.npsn();
        out.push((p.psn.get(), w.ack_req(true, ends, p.psn, now)));
        w.sent(slot, p, true, now);
    }
    out
}

/// Sends what the window allows with one read or atomic at a time; returns
/// the PSNs.
fn send_one_rd_atomic(w: &mut Window) -> Vec<u32> {
    let mut sent = Vec::new();
    while let Next::Send(slot) = w.next_to_send(true, 1) {
        let p = w.next_packet(slot).unwrap();
        sent.push(p.psn.get());
        w.sent(slot, p, true, 0);
    }
    sent
}

fn psns(sent: &[(u32, bool)]) -> Vec<u32> {
    sent.iter().map(|&(psn, _)| psn).collect()
}

fn done(w: &mut Window) -> usize {
    core::iter::from_fn(|| w.pop_done()).count()
}

/// Places response `n` of the read in `slot`, which must be taken.
fn place(w: &mut Window, slot: u32, n: u32) {
    let first = w.get(slot).unwrap().as_ref().first_psn;
    let r = w.read_response(first + n, MTU as usize, MTU);
    assert!(matches!(r, ReadResponse::Place { slot: s, n: m, .. } if s == slot && m == n));
    w.read_placed(slot, n, 1);
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
fn sent_to_a_fast_peer(w: &mut Window, packets: u32) -> u64 {
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
fn read_responses_are_placed_in_order() {
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 3 * MTU - 100);
    let sent = send_all(&mut w, 0);
    // One request for all three responses, asking for an ACK.
    assert_eq!(sent, [(0, true)]);
    for (n, len) in [(0, MTU), (1, MTU), (2, MTU - 100)] {
        let at = (n * MTU) as usize;
        let r = w.read_response(Psn::new(n), len as usize, MTU);
        assert_eq!(r, ReadResponse::Place { slot, n, at });
        w.read_placed(slot, n, 1);
    }
    assert_eq!(done(&mut w), 1);
}

#[test]
fn a_read_response_of_the_wrong_length_is_bad() {
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 2 * MTU);
    send_all(&mut w, 0);
    let r = w.read_response(Psn::new(0), MTU as usize - 1, MTU);
    assert_eq!(r, ReadResponse::Bad { slot });
    // The last one may be short, but not longer than the read.
    let r = w.read_response(Psn::new(0), MTU as usize, MTU);
    assert!(matches!(r, ReadResponse::Place { n: 0, .. }));
    w.read_placed(slot, 0, 0);
    let r = w.read_response(Psn::new(1), MTU as usize + 1, MTU);
    assert_eq!(r, ReadResponse::Bad { slot });
}

#[test]
fn a_gap_in_read_responses_asks_again_for_the_gap_once() {
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 8 * MTU);
    send_all(&mut w, 0);
    place(&mut w, slot, 0);
    // Response 1 lost: 2 shows it. 2 is taken, and the read asks again
    // for 1 alone.
    place(&mut w, slot, 2);
    let p = w.next_packet(slot).unwrap();
    assert_eq!((p.psn.get(), p.responses), (1, 1));
    assert_eq!(send_all(&mut w, 1), [(1, true)]);
    assert_eq!(w.window, WINDOW / 2);
    // The rest of the first answer is taken as it comes, and asks for
    // nothing more; then 1 completes the read.
    for n in 3..8 {
        place(&mut w, slot, n);
    }
    assert_eq!(w.next_to_send(true, 16), Next::Take);
    assert_eq!(done(&mut w), 0);
    place(&mut w, slot, 1);
    assert_eq!(done(&mut w), 1);
}

#[test]
fn a_read_takes_every_response_it_asked_for() {
    // The window lets a third chunk out once response 0 arrives: its
    // responses reach 190 past the first one missing.
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 300 * MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [0, 64]);
    place(&mut w, slot, 0);
    assert_eq!(psns(&send_all(&mut w, 1)), [128]);
    place(&mut w, slot, 191);
    // The gap from 1 is asked for up to the end of its chunk.
    let p = w.next_packet(slot).unwrap();
    assert_eq!((p.psn.get(), p.responses), (1, 63));
}

#[test]
fn ahead_keeps_256_responses() {
    let mut a = Ahead::default();
    for i in [0, 1, 2, 127, 128, 200, 255] {
        a.set(i);
    }
    a.set(256);
    assert_eq!((a.leading_run(), a.leading_gap()), (3, 0));
    a.shift(3);
    assert_eq!(a.leading_gap(), 124);
    assert!(a.get(124) && a.get(125) && a.get(197) && a.get(252) && !a.get(253));
    a.shift(125);
    assert_eq!(a.leading_run(), 1);
    a.shift(1);
    assert_eq!(a.leading_gap(), 71);
    assert!(a.get(126) && !a.get(127));
    a.shift(200);
    assert!(a.is_empty());
}

#[test]
fn read_gaps_are_asked_for_in_order() {
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 16 * MTU);
    send_all(&mut w, 0);
    // 1 and 6 lost; a response is taken once.
    for n in [0, 2, 3, 4, 5, 7, 8] {
        place(&mut w, slot, n);
    }
    assert_eq!(
        w.read_response(Psn::new(7), MTU as usize, MTU),
        ReadResponse::Ignore
    );
    // Only the first gap is asked for: the C rxe, once it has replayed a
    // read from some point, refuses to read from before it.
    assert_eq!(send_all(&mut w, 1), [(1, true)]);
    place(&mut w, slot, 1);
    // The second gap is the first now.
    let p = w.next_packet(slot).unwrap();
    assert_eq!((p.psn.get(), p.responses), (6, 1));
    assert_eq!(send_all(&mut w, 1), [(6, true)]);
    for n in [6, 9, 10, 11, 12, 13, 14, 15] {
        place(&mut w, slot, n);
    }
    assert_eq!(send_all(&mut w, 2), []);
    assert_eq!(done(&mut w), 1);
}

#[test]
fn a_timeout_asks_again_for_the_rest_of_the_chunk() {
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 8 * MTU);
    send_all(&mut w, 0);
    place(&mut w, slot, 0);
    place(&mut w, slot, 2);
    assert_eq!(send_all(&mut w, 1), [(1, true)]);
    // The gap's answer lost too: the timeout asks for all of the rest,
    // as the responder may not hold the request any more; what comes
    // again is taken once.
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(2 + limit, 14, 7, &Ms), Timer::Retry);
    let p = w.next_packet(slot).unwrap();
    assert_eq!((p.psn.get(), p.responses), (1, 7));
    assert_eq!(send_all(&mut w, 3 + limit), [(1, true)]);
    place(&mut w, slot, 1);
    assert_eq!(
        w.read_response(Psn::new(2), MTU as usize, MTU),
        ReadResponse::Ignore
    );
    // Another gap in what comes again is the timeout's to ask for.
    place(&mut w, slot, 4);
    assert_eq!(send_all(&mut w, 4 + limit), []);
}

#[test]
fn a_read_asked_again_keeps_its_chunks() {
    // The window is 128: a 200-packet read goes as chunks of 64.
    let mut w = window(8);
    let slot = post(&mut w, Kind::Read, 200 * MTU);
    let asks: Vec<_> = send_all(&mut w, 0).iter().map(|&(psn, _)| psn).collect();
    // Two requests fill the window.
    assert_eq!(asks, [0, 64]);
    for n in 0..10 {
        place(&mut w, slot, n);
    }
    // A timeout asks again from response 10 for the rest of the first
    // chunk only, never across into the second.
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(1 + limit, 14, 7, &Ms), Timer::Retry);
    let p = w.next_packet(slot).unwrap();
    assert_eq!((p.psn.get(), p.responses), (10, 54));
}

#[test]
fn max_rd_atomic_bounds_new_reads_not_repeated_ones() {
    let mut w = window(8);
    let first = post(&mut w, Kind::Read, MTU);
    w.admit(Wr(Track::new(Kind::Atomic, 8, MTU, w.next_psn())));
    assert_eq!(send_one_rd_atomic(&mut w), [0]);
    // Asking again for the read takes no new resource.
    let limit = Ms.usecs_to_ticks(timeout_usecs(14));
    assert_eq!(w.tick(limit, 14, 7, &Ms), Timer::Retry);
    assert_eq!(w.next_to_send(true, 1), Next::Send(first));
}

#[test]
fn an_atomic_is_answered_once_sent() {
    let mut w = window(8);
    w.admit(Wr(Track::new(Kind::Atomic, 8, MTU, w.next_psn())));
    assert_eq!(w.answer_for(Kind::Atomic, Psn::new(0)), None);
    assert_eq!(psns(&send_all(&mut w, 0)), [0]);
    assert_eq!(w.answer_for(Kind::Atomic, Psn::new(0)), Some(0));
    // A plain ACK does not complete it.
    w.ack(Psn::new(0), 1);
    assert_eq!(done(&mut w), 0);
    w.answered(0, 1);
    assert_eq!(done(&mut w), 1);
}

// FLUSH and ATOMIC WRITE: one packet, answered by an empty read response,
// or, as the C rxe's completer has it, by an ACK of it or of a later PSN.
#[test]
fn a_commit_is_answered_or_acknowledged() {
    let mut w = window(8);
    post(&mut w, Kind::Commit, 8);
    assert_eq!(w.answer_for(Kind::Commit, Psn::new(0)), None);
    assert_eq!(send_all(&mut w, 0), [(0, true)]);
    // Not an atomic's answer.
    assert_eq!(w.answer_for(Kind::Atomic, Psn::new(0)), None);
    assert_eq!(w.answer_for(Kind::Commit, Psn::new(0)), Some(0));
    w.answered(0, 1);
    assert_eq!(done(&mut w), 1);

    post(&mut w, Kind::Commit, 4096);
    post(&mut w, Kind::Data, MTU);
    assert_eq!(psns(&send_all(&mut w, 2)), [2]);
    w.ack(Psn::new(2), 3);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn a_commit_holds_a_responder_resource() {
    let mut w = window(8);
    post(&mut w, Kind::Commit, 0);
    w.admit(Wr(Track::new(Kind::Atomic, 8, MTU, w.next_psn())));
    // One read or atomic at a time: the atomic waits for the FLUSH.
    assert_eq!(send_one_rd_atomic(&mut w), [0]);
    assert!(w.reads_pending());
    w.ack(Psn::new(0), 1);
    assert_eq!(done(&mut w), 1);
    assert_eq!(w.next_to_send(true, 1), Next::Send(1));
}

#[test]
fn an_ack_does_not_pass_an_unanswered_read() {
    let mut w = window(8);
    post(&mut w, Kind::Data, MTU);
    post(&mut w, Kind::Read, MTU);
    post(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    w.ack(Psn::new(2), 1);
    assert_eq!(done(&mut w), 1);
    // The read's response acknowledges the write before it, but not
    // the one after.
    assert!(w.reads_pending());
    assert!(matches!(
        w.read_response(Psn::new(1), MTU as usize, MTU),
        ReadResponse::Place { slot: 1, n: 0, .. }
    ));
    w.read_placed(1, 0, 2);
    assert!(!w.reads_pending());
    assert_eq!(done(&mut w), 1);
    w.ack(Psn::new(2), 3);
    assert_eq!(done(&mut w), 1);
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
    while let Next::Send(slot) = w.next_to_send(false, 0) {
        let p = w.next_packet(slot).unwrap();
        assert!(!w.ack_req(false, true, p.psn, 0));
        w.sent(slot, p, false, 0);
    }
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
