// SPDX-License-Identifier: GPL-2.0

//! Several QPs' send windows against one peer slower than the link: what
//! data_congestion meets on the debug kernel, where the receiving CPU, not
//! the link, sets the pace. The peer handles one packet at a time from a
//! queue every QP sends into, in arrival order, and answers at once as
//! window_sim's model of rxe's responder does; nothing is lost. Each QP writes messages of 64 packets, up to 16 outstanding, as
//! rc_stream does, with data_congestion's QP timeout.

extern crate alloc;

use crate::proto::{
    psn::Psn,
    ring::Ring,
    window::{Kind, Next, SendWindow, Timer, Track},
};
use crate::window_sim::{Ms, Request, Responder, Response};
use alloc::{collections::VecDeque, vec, vec::Vec};

const MTU: u32 = 1024;
/// Packets in a message.
const MESSAGE: u32 = 64;
/// Messages a QP has outstanding at most.
const DEPTH: u32 = 16;
/// QP timeout code 17: 537 ms.
const TIMEOUT: u8 = 17;
const RETRY_CNT: u8 = 7;

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

/// A request packet in the peer's queue: its QP, PSN and whether it asks
/// for an ACK.
type Packet = (usize, Psn, bool);

/// What a run showed.
pub(crate) struct Outcome {
    /// Each QP's longest wait for a completion, in ticks.
    pub(crate) longest_wait: Vec<u64>,
    /// Packets the peer received again.
    pub(crate) duplicates: u32,
    /// When the last message completed, or a QP gave up.
    pub(crate) ticks: u64,
    /// Whether a QP ran out of retries.
    pub(crate) gave_up: bool,
}

/// `qps` QPs each write `messages` messages to a peer that handles a packet
/// every `service` ticks; the last QP starts at tick `late`.
pub(crate) fn run(qps: usize, messages: u32, service: u64, late: u64) -> Outcome {
    let ring = Ring::new(2 * DEPTH - 1, 64).unwrap();
    let mut windows: Vec<SendWindow<Vec<Option<Wr>>>> = (0..qps)
        .map(|_| {
            let mut slots = Vec::new();
            slots.resize_with(ring.index_mask() as usize + 1, || None);
            SendWindow::new(slots, ring, &Ms)
        })
        .collect();
    let mut responders: Vec<Responder> = (0..qps).map(|_| Responder::new()).collect();
    let mut duplicates = 0;
    let (mut posted, mut completed) = (vec![0u32; qps], vec![0u32; qps]);
    let (mut last_completion, mut longest_wait) = (vec![0u64; qps], vec![0u64; qps]);
    let mut queue: VecDeque<Packet> = VecDeque::new();
    let (mut now, mut gave_up) = (0, false);
    while completed.iter().any(|&c| c < messages) && !gave_up {
        for (qp, w) in windows.iter_mut().enumerate() {
            if qp + 1 == qps && now < late {
                last_completion[qp] = now;
                continue;
            }
            loop {
                match w.next_to_send(true, 16) {
                    Next::Wait => break,
                    Next::Take if posted[qp] < messages && posted[qp] - completed[qp] < DEPTH => {
                        posted[qp] += 1;
                        w.admit(Wr(Track::new(Kind::Data, MESSAGE * MTU, MTU, w.next_psn())));
                    }
                    Next::Take => break,
                    Next::Send(slot) => {
                        let p = w.next_packet(slot).unwrap();
                        let ends = p.n + 1 == MESSAGE;
                        let ack_req = w.ack_req(true, ends, p.psn, now);
                        w.sent(slot, p, true, now);
                        queue.push_back((qp, p.psn, ack_req));
                    }
                }
            }
        }
        if now % service == 0 {
            if let Some((qp, psn, ack_req)) = queue.pop_front() {
                let (w, r) = (&mut windows[qp], &mut responders[qp]);
                if psn.before(r.expected()) {
                    duplicates += 1;
                }
                let mut answers = VecDeque::new();
                r.receive(Request::Data { psn, ack_req }, &mut answers);
                for answer in answers {
                    match answer {
                        Response::Ack(psn) if w.expects(psn) => w.ack(psn, now),
                        Response::SeqNak(psn) if w.expects(psn) => w.seq_nak(psn, now),
                        _ => {}
                    }
                }
            }
        }
        now += 1;
        for (qp, w) in windows.iter_mut().enumerate() {
            while w.pop_done_with(|_| ()).is_some() {
                completed[qp] += 1;
                last_completion[qp] = now;
            }
            longest_wait[qp] = longest_wait[qp].max(now - last_completion[qp]);
            gave_up |= w.tick(now, TIMEOUT, RETRY_CNT, &Ms) == Timer::GiveUp;
        }
    }
    Outcome {
        longest_wait,
        duplicates,
        ticks: now,
        gave_up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// data_congestion on the debug kernel: four QPs, 20 messages each, to
    /// a peer that handles 50 or 25 packets a second, all at once or with
    /// one QP late. Nothing is lost, but the first windows alone queue
    /// 10 to 20 s of packets at the peer, far more than the timeout. Before
    /// 3 December, timeouts sent half of each window again and again: at
    /// 25 packets a second, one QP ran out of retries after 34 s; with one
    /// QP late, one waited 58 s for a completion (rc_stream gives up at
    /// 60), 1311 packets went twice, and the peer took 257 s for 205 s of
    /// packets.
    #[test]
    fn no_qp_starves_behind_a_slow_peer() {
        for (service, late) in [(20, 0), (40, 0), (40, 30_000)] {
            let o = run(4, 20, service, late);
            let packets = 4 * 20 * u64::from(MESSAGE);
            let what = std::format!(
                "a packet every {service} ms, the last QP from {late} ms: {} ms{}, \
                 longest waits {:?} ms, {} packets twice",
                o.ticks,
                if o.gave_up { ", gave up" } else { "" },
                o.longest_wait,
                o.duplicates
            );
            std::println!("{what}");
            assert!(!o.gave_up, "{what}");
            assert!(o.ticks < packets * service * 11 / 10, "{what}");
            assert!(o.longest_wait.iter().all(|&w| w < 45_000), "{what}");
            assert!(u64::from(o.duplicates) < packets / 10, "{what}");
        }
    }
}
