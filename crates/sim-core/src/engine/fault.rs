//! Link failures and repairs ([`Faults`]): the plan made at set-up (when each link is down,
//! the routing tables in force after each change) and the events that apply it at both ends
//! of a link.
//!
//! Everything is known before the run, so the plan is immutable and shared by every shard:
//! a sender decides at transmission whether its frame survives (the link must stay up from
//! the frame's first bit out to its last bit in), so a frame crossing to another shard needs
//! no message about the link's fate, and the outcome does not depend on the partition.

use dcsim_aqm::{Qdisc, QueueDisc};

use super::{Shard, Shared, Slot};
use crate::cc::CcFactory;
use crate::config::Faults;
use crate::ids::{LinkId, NodeId};
use crate::mmu::QUEUES;
use crate::network::{Network, RoutingTable};
use crate::sim::SimError;
use crate::units::Time;

const MAX_ROUTE_CHANGES: usize = Faults::MAX_ROUTE_CHANGES;

/// The failure plan of a run with link events.
pub(crate) struct FaultPlan {
    /// Per link: the intervals `[down, up)` during which it is down, in time order (`up` =
    /// `Time::MAX` if never restored). Empty for links that never fail.
    down: Vec<Vec<(Time, Time)>>,
    /// The routing tables in force from each time on, in time order; before the first,
    /// the run's initial table (`Shared::routes`).
    epochs: Vec<(Time, RoutingTable)>,
    /// The scheduled state changes: (time, link, up), ordered by time then list order.
    pub(crate) changes: Vec<(Time, LinkId, bool)>,
}

impl FaultPlan {
    /// The plan for `faults` on `net` for a run that stops at `stop` (later events never
    /// happen and are left out); `None` when no event changes anything before `stop`.
    pub(crate) fn new(
        net: &Network,
        faults: &Faults,
        stop: Time,
    ) -> Result<Option<FaultPlan>, SimError> {
        if faults.events.is_empty() {
            return Ok(None);
        }
        let nlinks = net.links().len();
        for (i, e) in faults.events.iter().enumerate() {
            if e.link.idx() >= nlinks {
                return Err(SimError::Fault(format!(
                    "event {i}: link {} does not exist (the network has {nlinks} links)",
                    e.link
                )));
            }
        }
        let mut order: Vec<usize> =
            (0..faults.events.len()).filter(|&i| faults.events[i].at <= stop).collect();
        order.sort_by_key(|&i| faults.events[i].at); // stable: ties in list order
        let mut up = vec![true; nlinks];
        let mut down: Vec<Vec<(Time, Time)>> = vec![Vec::new(); nlinks];
        let mut changes = Vec::new();
        let mut epochs: Vec<(Time, RoutingTable)> = Vec::new();
        let mut k = 0;
        while k < order.len() {
            let at = faults.events[order[k]].at;
            let mut changed = false;
            while k < order.len() && faults.events[order[k]].at == at {
                let e = faults.events[order[k]];
                k += 1;
                let l = e.link.idx();
                if up[l] == e.up {
                    continue; // already in that state
                }
                up[l] = e.up;
                changed = true;
                changes.push((at, e.link, e.up));
                if e.up {
                    let last = down[l].last_mut().expect("a restored link went down first");
                    last.1 = at;
                } else {
                    down[l].push((at, Time::MAX));
                }
            }
            if changed {
                if epochs.len() == MAX_ROUTE_CHANGES {
                    return Err(SimError::Fault(format!(
                        "more than {MAX_ROUTE_CHANGES} distinct times at which links change \
                         state (each keeps a routing table)"
                    )));
                }
                let from = Time(at.0.saturating_add(faults.convergence.as_ps()));
                // A later change converging at the same time replaces the earlier table.
                if epochs.last().is_some_and(|(t, _)| *t == from) {
                    epochs.pop();
                }
                let table = RoutingTable::shortest_paths_within(net, &up, RoutingTable::MAX_WORK)
                    .map_err(|n| {
                    SimError::Fault(format!(
                        "the routes after the change at {at:?} take {n} steps to compute, \
                             more than the limit of {}",
                        RoutingTable::MAX_WORK
                    ))
                })?;
                epochs.push((from, table));
            }
        }
        if changes.is_empty() {
            return Ok(None);
        }
        Ok(Some(FaultPlan { down, epochs, changes }))
    }

    /// Whether link `link` is down at some instant of `[start, end]`: a frame whose first bit
    /// leaves at `start` and whose last bit would arrive at `end` is lost.
    #[inline]
    pub(crate) fn cut(&self, link: u32, start: Time, end: Time) -> bool {
        self.down[link as usize].iter().any(|&(d, u)| d <= end && u > start)
    }

    /// The routing table in force at `now` (`initial` before the first change converges).
    #[inline]
    pub(crate) fn routes<'a>(&'a self, now: Time, initial: &'a RoutingTable) -> &'a RoutingTable {
        match self.epochs.partition_point(|(t, _)| *t <= now) {
            0 => initial,
            i => &self.epochs[i - 1].1,
        }
    }
}

impl<F: CcFactory> Shard<F> {
    /// Link state change at port `port` of `node`: the port stops (or resumes) transmitting.
    /// A failing switch port drops every frame it holds and forgets the PFC state of the link
    /// (both the pauses its peer asked for and those it asked of its peer); a failing host
    /// port forgets its pauses. A restored port starts sending at once.
    pub(crate) fn link_change(&mut self, sh: &Shared<F>, node: u32, port: u16, up: bool) {
        let now = self.now;
        let link = self.link_mut(sh, node, port);
        if link.down != up {
            return; // no change
        }
        link.down = !up;
        link.paused = Default::default();
        if up {
            // A frame cut off by the failure still held the transmitter until its last bit
            // (its TxDone, if pending, comes then): the port is free from then on.
            link.busy_until = link.cut_until.max(now);
        } else {
            // Nothing is put on the wire until the link is restored.
            link.cut_until = link.busy_until;
            link.busy_until = Time::MAX;
        }
        match sh.place[node as usize].slot {
            Slot::Host(h) => {
                if up {
                    self.host_send(sh, h as usize);
                }
            }
            Slot::Switch(s) => {
                if up {
                    self.switch_send(sh, s as usize, port as usize);
                } else {
                    self.flush_port(sh, s as usize, port as usize);
                }
            }
        }
    }

    /// Drops every frame queued at egress port `out` of switch slot `s` (its link failed),
    /// settling the buffer accounting (which may resume other upstreams), and gives each class
    /// a fresh discipline. Pauses this switch sent out of the port are forgotten.
    fn flush_port(&mut self, sh: &Shared<F>, s: usize, out: usize) {
        // The upstream on this link was un-paused at its end when the link failed: no resume
        // is owed to it (and none is sent into the dead link below).
        self.switches[s].mmu.forget_pauses(out);
        let mut held = Vec::new();
        for q in 0..QUEUES {
            held.clear();
            let sw = &mut self.switches[s];
            let node = NodeId(sw.node);
            let port = &mut sw.ports[out];
            port.classes[q].drain_handles(&mut held);
            port.classes[q] = fresh_class(sh, node, out, q, port.link.rate);
            port.mark_backlog(q);
            for &pkt in &held {
                let (wire, inp) = {
                    let p = &self.pool[pkt as usize];
                    (p.wire as u64, p.in_port.idx())
                };
                let sw = &mut self.switches[s];
                let port = &mut sw.ports[out];
                port.backlog.shrink(&sh.watch, &mut port.sample, self.now, wire, q);
                self.counters.drops_link_down += 1;
                if q != 0 && sw.mmu.release(inp, out, q, wire) {
                    self.counters.pfc_resumes += 1;
                    self.switch_send_pfc(sh, s, inp, false, q as u8);
                }
                self.drop_packet(pkt);
            }
        }
        self.switches[s].ports[out].settle(&sh.watch, self.now);
    }
}

/// A new discipline for class `q` of port `p` of switch `node` (of rate `rate`), as set-up
/// makes it.
fn fresh_class<F: CcFactory>(
    sh: &Shared<F>,
    node: NodeId,
    p: usize,
    q: usize,
    rate: crate::units::BitsPerSec,
) -> Qdisc {
    let ecn = if sh.cfg.switch.ecn_enabled { sh.cfg.switch.ecn_for(rate) } else { None };
    crate::sim::class_qdisc(&sh.cfg, node, p, q, ecn)
}

#[cfg(test)]
mod tests {
    use super::FaultPlan;
    use crate::config::{Faults, LinkEvent};
    use crate::ids::{LinkId, NodeId, PortNo};
    use crate::network::{test_link, Network, NodeKind, RoutingTable};
    use crate::units::{Duration, Time};

    /// Host 0 and host 1 on switches 2 and 3, joined by two parallel paths through switches 4
    /// and 5: links 0 (0-2), 1 (1-3), 2 (2-4), 3 (4-3), 4 (2-5), 5 (5-3).
    fn diamond() -> Network {
        let l = test_link;
        use NodeKind::{Host, Switch};
        Network::new(
            vec![Host, Host, Switch, Switch, Switch, Switch],
            vec![l(0, 2), l(1, 3), l(2, 4), l(4, 3), l(2, 5), l(5, 3)],
        )
        .unwrap()
    }

    fn ev(at_ns: u64, link: u32, up: bool) -> LinkEvent {
        LinkEvent { at: Time::from_ns(at_ns), link: LinkId(link), up }
    }

    #[test]
    fn frames_are_cut_when_the_link_is_down_at_any_instant_of_their_passage() {
        let net = diamond();
        let faults = Faults {
            events: vec![ev(100, 2, false), ev(200, 2, true), ev(150, 2, false)],
            convergence: Duration::ZERO,
        };
        let plan = FaultPlan::new(&net, &faults, Time::MAX).unwrap().unwrap();
        let t = Time::from_ns;
        // The second "down" (at 150) finds the link down already: one interval [100, 200).
        assert_eq!(plan.changes.len(), 2);
        assert!(!plan.cut(2, t(0), t(99)));
        assert!(plan.cut(2, t(0), t(100)), "the last bit arrives as the link dies");
        assert!(plan.cut(2, t(150), t(160)));
        assert!(plan.cut(2, t(199), t(300)));
        assert!(!plan.cut(2, t(200), t(300)), "sent once the link is back");
        assert!(!plan.cut(3, t(0), t(1000)), "other links never fail");
    }

    #[test]
    fn routes_change_after_the_convergence_delay_and_skip_failed_links() {
        let net = diamond();
        let initial = RoutingTable::shortest_paths(&net, &[]);
        // Switch 2 towards host 1 (index 1): ports 1 (to 4) and 2 (to 5).
        assert_eq!(initial.next_hops(NodeId(2), 1), &[PortNo(1), PortNo(2)]);
        let faults = Faults {
            events: vec![ev(100, 2, false), ev(300, 2, true), ev(300, 4, false)],
            convergence: Duration::from_ns(10),
        };
        let plan = FaultPlan::new(&net, &faults, Time::MAX).unwrap().unwrap();
        let hops = |ns| plan.routes(Time::from_ns(ns), &initial).next_hops(NodeId(2), 1).to_vec();
        assert_eq!(hops(109), vec![PortNo(1), PortNo(2)], "not converged yet");
        assert_eq!(hops(110), vec![PortNo(2)]);
        assert_eq!(hops(310), vec![PortNo(1)], "both changes at 300 in one table");
        // Both paths down: no route (the packet is dropped and counted).
        let faults =
            Faults { events: vec![ev(0, 2, false), ev(0, 4, false)], convergence: Duration::ZERO };
        let plan = FaultPlan::new(&net, &faults, Time::MAX).unwrap().unwrap();
        assert!(plan.routes(Time::ZERO, &initial).next_hops(NodeId(2), 1).is_empty());
    }

    #[test]
    fn no_events_no_plan() {
        let net = diamond();
        assert!(FaultPlan::new(&net, &Faults::default(), Time::MAX).unwrap().is_none());
        // Restoring a link that never failed changes nothing.
        let f = Faults { events: vec![ev(5, 1, true)], convergence: Duration::ZERO };
        assert!(FaultPlan::new(&net, &f, Time::MAX).unwrap().is_none());
    }
}
