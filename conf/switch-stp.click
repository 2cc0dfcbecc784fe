// An IEEE 802.1D learning Ethernet switch with spanning tree: the Click
// paper's Figure 16. Three ports on FromDevice/ToDevice:
//
//   rclick conf/switch-stp.click DEV0=eth1 DEV1=eth2 DEV2=eth3 \
//       ADDR=02:00:00:00:01:00 PRIORITY=0x8000
//
// Each port's frames are split into 802.1D BPDUs (destination
// 01:80:c2:00:00:00, LLC 42 42 03), which go to the spanning tree; other
// frames to the reserved link-local group addresses 01:80:c2:00:00:00 to
// 0f (LLDP, 802.3x pause, 802.1X, ...), which a bridge must not forward
// (802.1D 7.12.6) and which are counted by `local.count` and dropped; and
// the rest, which go through the input Suppressor, the learning switch and
// the output Suppressor. The spanning tree suppresses the ports it blocks
// (and keeps listening/learning ports from forwarding) and sends its
// BPDUs out of each port.
//
// ADDR is the bridge's address (its ID is PRIORITY then ADDR); PRIORITY
// defaults to Click's 0xdead, which leaves the root to other bridges.
// TIMEOUT is the address aging time in seconds; HELLO_TIME, MAX_AGE and
// FORWARD_DELAY (seconds) are the 802.1D timers the bridge uses when it is
// the root (otherwise it uses the root's). For N ports, give every
// element N ports: copy a port block below and number it.
//
// EtherSpanTree, like Click's, does not watch link state: when a port's
// link fails at the far end, the bridge gives up the information it heard
// there only after MAX_AGE, then spends 2 x FORWARD_DELAY bringing another
// port forward (a Linux bridge that sees its own port lose carrier skips
// the MAX_AGE wait). With Linux bridges in the tree, give their ports path
// cost 1 (`bridge link set dev DEV cost 1`): EtherSpanTree adds 1 per hop,
// Linux 2 for a 10 Gb/s port by default, and unequal costs make the tree
// block other ports than the priorities suggest. Measured convergence and
// outage times: docs/benchmarks.md.

define($DEV0 eth0, $DEV1 eth1, $DEV2 eth2,
       $ADDR 02:00:00:00:01:00, $PRIORITY 0xdead, $TIMEOUT 300,
       $HELLO_TIME 2, $MAX_AGE 20, $FORWARD_DELAY 15);

switch :: EtherSwitch(TIMEOUT $TIMEOUT);
in :: Suppressor;
out :: Suppressor;
local :: Counter -> Discard;
stp :: EtherSpanTree($ADDR, in, out, switch, PRIORITY $PRIORITY,
  HELLO_TIME $HELLO_TIME, MAX_AGE $MAX_AGE, FORWARD_DELAY $FORWARD_DELAY);

// Port 0
FromDevice($DEV0, PROMISC true)
  -> c0 :: Classifier(0/0180c2000000 14/4242, 0/0180c2000000%fffffffffff0, -);
q0 :: Queue(1000) -> ToDevice($DEV0);
c0[0] -> [0]stp[0] -> q0;
c0[1] -> local;
c0[2] -> [0]in[0] -> [0]switch[0] -> [0]out[0] -> q0;

// Port 1
FromDevice($DEV1, PROMISC true)
  -> c1 :: Classifier(0/0180c2000000 14/4242, 0/0180c2000000%fffffffffff0, -);
q1 :: Queue(1000) -> ToDevice($DEV1);
c1[0] -> [1]stp[1] -> q1;
c1[1] -> local;
c1[2] -> [1]in[1] -> [1]switch[1] -> [1]out[1] -> q1;

// Port 2
FromDevice($DEV2, PROMISC true)
  -> c2 :: Classifier(0/0180c2000000 14/4242, 0/0180c2000000%fffffffffff0, -);
q2 :: Queue(1000) -> ToDevice($DEV2);
c2[0] -> [2]stp[2] -> q2;
c2[1] -> local;
c2[2] -> [2]in[2] -> [2]switch[2] -> [2]out[2] -> q2;
