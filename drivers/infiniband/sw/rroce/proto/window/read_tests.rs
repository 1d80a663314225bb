// SPDX-License-Identifier: GPL-2.0

//! Host tests of the send window's reads, atomics and commits: responses
//! placed in order, gaps asked for again, the responder resources they
//! hold.

use super::tests::{
    done, place, post, psns, send_all, send_one_rd_atomic, window, Ms, Window, Wr, MTU,
};
use super::timer::timeout_usecs;
use super::track::Ahead;
use super::*;
use std::vec::Vec;

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
fn an_ack_past_a_read_asks_again_for_what_it_lacks() {
    let mut w = window(8);
    take(&mut w, Kind::Data, MTU);
    let read = take(&mut w, Kind::Read, 2 * MTU);
    take(&mut w, Kind::Data, MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [0, 1, 3]);
    // The read's last response was lost: the ACK of the write after it
    // shows that the peer answered it. The writes are done, the read asks
    // again for that response alone, at once.
    place(&mut w, read, 0);
    w.ack(Psn::new(3), 1);
    assert_eq!(done(&mut w), 1);
    assert!(w.reads_pending());
    assert_eq!(w.window, WINDOW / 2);
    let p = w.next_packet(read).unwrap();
    assert_eq!((p.psn.get(), p.responses), (2, 1));
    assert_eq!(psns(&send_all(&mut w, 1)), [2]);
    // Once: the same ACK again, or a NAK past it, asks for nothing more.
    w.ack(Psn::new(3), 2);
    w.seq_nak(Psn::new(4), 2);
    assert_eq!(send_all(&mut w, 2), []);
    // Its answer completes the read and the write after it.
    place(&mut w, read, 1);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn an_answer_past_a_read_asks_again_for_what_it_lacks() {
    let mut w = window(8);
    let first = take(&mut w, Kind::Read, 2 * MTU);
    let second = take(&mut w, Kind::Read, MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [0, 2]);
    // The first read's last response lost, the second's answer came.
    place(&mut w, first, 0);
    place(&mut w, second, 0);
    assert_eq!(done(&mut w), 0);
    assert_eq!(psns(&send_all(&mut w, 1)), [1]);
    place(&mut w, first, 1);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn an_ack_past_an_atomic_sends_it_again() {
    let mut w = window(8);
    take(&mut w, Kind::Atomic, 8);
    take(&mut w, Kind::Data, MTU);
    assert_eq!(psns(&send_all(&mut w, 0)), [0, 1]);
    // The atomic's answer was lost; the peer replays it for the atomic
    // sent again.
    w.ack(Psn::new(1), 1);
    assert_eq!(psns(&send_all(&mut w, 1)), [0]);
    w.ack(Psn::new(1), 2);
    assert_eq!(send_all(&mut w, 2), []);
    assert_eq!(done(&mut w), 0);
    assert_eq!(w.answer_for(Kind::Atomic, Psn::new(0)), Some(0));
    w.answered(0, 3);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn a_late_atomic_answer_is_taken_before_it_goes_again() {
    let mut w = window(8);
    take(&mut w, Kind::Atomic, 8);
    take(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    // The ACK overtook the atomic's answer, which comes before the atomic
    // went again: it is taken, and the atomic not sent.
    w.ack(Psn::new(1), 1);
    assert_eq!(w.answer_for(Kind::Atomic, Psn::new(0)), Some(0));
    w.answered(0, 1);
    assert_eq!(send_all(&mut w, 1), []);
    assert_eq!(done(&mut w), 2);
}

#[test]
fn a_nak_right_after_a_read_asks_again_for_what_it_lacks() {
    let mut w = window(8);
    let read = take(&mut w, Kind::Read, 2 * MTU);
    take(&mut w, Kind::Data, MTU);
    send_all(&mut w, 0);
    place(&mut w, read, 0);
    // The write after the read was lost too: its sequence NAK shows the
    // read answered.
    w.seq_nak(Psn::new(2), 1);
    assert_eq!(w.window, WINDOW / 2);
    assert_eq!(psns(&send_all(&mut w, 1)), [1, 2]);
}

#[test]
fn reads_answered_after_one_still_missing_hold_their_resources() {
    let mut w = window(8);
    let first = take(&mut w, Kind::Read, 2 * MTU);
    let second = take(&mut w, Kind::Read, MTU);
    let third = take(&mut w, Kind::Read, MTU);
    assert_eq!(w.next_to_send(true, 2), Next::Send(first));
    send_one(&mut w, first);
    send_one(&mut w, second);
    // The first read lacks a response, the second is answered. A third
    // would take the place of the first's resource at the responder (the
    // C rxe overwrites the oldest), where asking again for it would fail.
    place(&mut w, first, 0);
    place(&mut w, second, 0);
    assert_eq!(w.next_to_send(true, 2), Next::Send(first));
    send_one(&mut w, first);
    assert_eq!(w.next_to_send(true, 2), Next::Wait);
    place(&mut w, first, 1);
    assert_eq!(w.next_to_send(true, 2), Next::Send(third));
}

/// Sends the next packet of the request in `slot`.
fn send_one(w: &mut Window, slot: u32) {
    let p = w.next_packet(slot).unwrap();
    w.sent(slot, p, true, 0);
    w.check().unwrap();
}

/// Takes a request of `kind` and `length` bytes without sending anything.
fn take(w: &mut Window, kind: Kind, length: u32) -> u32 {
    let slot = w.next_slot();
    w.admit(Wr(Track::new(kind, length, MTU, w.next_psn())));
    slot
}
