//! Ethernet II frames and addresses, and IEEE 802.1Q VLAN tags.
//!
//! [`EtherFrame`] views the 14-byte header (destination, source,
//! EtherType); [`EthernetRepr`] is the same as values. A tagged frame has
//! EtherType [`ETHERTYPE_VLAN`] (or [`ETHERTYPE_QINQ`] for an 802.1ad
//! outer tag) and its payload starts with a 4-byte tag: view it with
//! [`VlanTag`] on [`EtherFrame::payload`], whose own payload is the
//! encapsulated packet, so stacked tags chain the same way.

use super::{be16, check_len, ether_at, put16, WireError};

/// EtherType of IPv4.
pub const ETHERTYPE_IP: u16 = 0x0800;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// EtherType of IPv6.
pub const ETHERTYPE_IP6: u16 = 0x86dd;
/// EtherType (TPID) of an IEEE 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType (TPID) of an IEEE 802.1ad service (outer, "QinQ") tag.
pub const ETHERTYPE_QINQ: u16 = 0x88a8;
/// Length of an Ethernet II header.
pub const HEADER_LEN: usize = 14;
/// Length of an 802.1Q tag after the TPID: TCI and inner EtherType.
pub const VLAN_TAG_LEN: usize = 4;

/// A 48-bit Ethernet address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EtherAddr(pub [u8; 6]);

impl EtherAddr {
    /// ff-ff-ff-ff-ff-ff.
    pub const BROADCAST: EtherAddr = EtherAddr([0xff; 6]);

    /// Whether this is the broadcast address.
    #[inline]
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// Group (multicast or broadcast) addresses have the low bit of the
    /// first octet set.
    #[inline]
    pub fn is_group(&self) -> bool {
        self.0[0] & 1 != 0
    }

    /// The address as bytes.
    #[inline]
    pub fn octets(&self) -> [u8; 6] {
        self.0
    }
}

/// Click prints Ethernet addresses as `00-01-02-03-04-05`.
impl std::fmt::Display for EtherAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let o = self.0;
        write!(
            f,
            "{:02X}-{:02X}-{:02X}-{:02X}-{:02X}-{:02X}",
            o[0], o[1], o[2], o[3], o[4], o[5]
        )
    }
}

view! {
    /// A view of an Ethernet II header at the start of a buffer.
    EtherFrame
}

impl<T: AsRef<[u8]>> EtherFrame<T> {
    /// Checks the buffer holds at least a 14-byte header.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), HEADER_LEN)?;
        Ok(EtherFrame { buf })
    }

    /// Destination address.
    #[inline]
    pub fn dst(&self) -> EtherAddr {
        ether_at(self.b(), 0)
    }

    /// Source address.
    #[inline]
    pub fn src(&self) -> EtherAddr {
        ether_at(self.b(), 6)
    }

    /// EtherType (or TPID, for a tagged frame).
    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.b(), 12)
    }

    /// Whether the frame carries an 802.1Q or 802.1ad tag after the
    /// addresses.
    #[inline]
    pub fn is_tagged(&self) -> bool {
        matches!(self.ethertype(), ETHERTYPE_VLAN | ETHERTYPE_QINQ)
    }

    /// The bytes after the 14-byte header.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EtherFrame<T> {
    /// Sets the destination address.
    #[inline]
    pub fn set_dst(&mut self, a: EtherAddr) {
        self.bm()[0..6].copy_from_slice(&a.0);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src(&mut self, a: EtherAddr) {
        self.bm()[6..12].copy_from_slice(&a.0);
    }

    /// Sets the EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.bm(), 12, t);
    }

    /// The bytes after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[HEADER_LEN..]
    }
}

/// An Ethernet II header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Source address.
    pub src: EtherAddr,
    /// Destination address.
    pub dst: EtherAddr,
    /// EtherType of the payload.
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Reads the header; a checked view is always a valid header.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(f: &EtherFrame<T>) -> Result<Self, WireError> {
        Ok(EthernetRepr {
            src: f.src(),
            dst: f.dst(),
            ethertype: f.ethertype(),
        })
    }

    /// Header length: 14.
    #[inline]
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Bytes `emit` writes: 14.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header. Panics if the buffer is shorter than 14 bytes.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, f: &mut EtherFrame<T>) {
        f.set_dst(self.dst);
        f.set_src(self.src);
        f.set_ethertype(self.ethertype);
    }
}

view! {
    /// A view of an 802.1Q tag: the 4 bytes after a [`ETHERTYPE_VLAN`] (or
    /// [`ETHERTYPE_QINQ`]) TPID, i.e. the start of [`EtherFrame::payload`] of
    /// a tagged frame.
    VlanTag
}

impl<T: AsRef<[u8]>> VlanTag<T> {
    /// Checks the buffer holds the 4-byte tag.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, WireError> {
        check_len(buf.as_ref(), VLAN_TAG_LEN)?;
        Ok(VlanTag { buf })
    }

    /// Tag control information: PCP (3 bits), DEI (1), VID (12).
    #[inline]
    pub fn tci(&self) -> u16 {
        be16(self.b(), 0)
    }

    /// Priority code point (802.1p class).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator.
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// VLAN identifier.
    #[inline]
    pub fn vid(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// EtherType of the encapsulated packet (another TPID when stacked).
    #[inline]
    pub fn ethertype(&self) -> u16 {
        be16(self.b(), 2)
    }

    /// The bytes after the tag.
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[VLAN_TAG_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanTag<T> {
    /// Sets the whole TCI.
    #[inline]
    pub fn set_tci(&mut self, v: u16) {
        put16(self.bm(), 0, v);
    }

    /// Sets the VLAN identifier (low 12 bits of `v`), keeping PCP and DEI.
    #[inline]
    pub fn set_vid(&mut self, v: u16) {
        let t = (self.tci() & 0xf000) | (v & 0x0fff);
        self.set_tci(t);
    }

    /// Sets the priority code point (low 3 bits of `v`).
    #[inline]
    pub fn set_pcp(&mut self, v: u8) {
        let t = (self.tci() & 0x1fff) | (((v & 7) as u16) << 13);
        self.set_tci(t);
    }

    /// Sets the encapsulated EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.bm(), 2, t);
    }

    /// The bytes after the tag, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bm()[VLAN_TAG_LEN..]
    }
}

/// An 802.1Q tag as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlanRepr {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..=4095.
    pub vid: u16,
    /// EtherType of the encapsulated packet.
    pub ethertype: u16,
}

impl VlanRepr {
    /// Reads the tag; a checked view is always a valid tag.
    #[inline]
    pub fn parse<T: AsRef<[u8]>>(v: &VlanTag<T>) -> Result<Self, WireError> {
        Ok(VlanRepr {
            pcp: v.pcp(),
            dei: v.dei(),
            vid: v.vid(),
            ethertype: v.ethertype(),
        })
    }

    /// The TCI word these fields make (out-of-range values are masked).
    #[inline]
    pub fn tci(&self) -> u16 {
        (((self.pcp & 7) as u16) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0fff)
    }

    /// Tag length after the TPID: 4.
    #[inline]
    pub const fn header_len(&self) -> usize {
        VLAN_TAG_LEN
    }

    /// Bytes `emit` writes: 4.
    #[inline]
    pub const fn buffer_len(&self) -> usize {
        VLAN_TAG_LEN
    }

    /// Writes the tag. Panics if the buffer is shorter than 4 bytes.
    #[inline]
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, v: &mut VlanTag<T>) {
        v.set_tci(self.tci());
        v.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn view_and_edit() {
        let mut b = [0u8; 20];
        b[12] = 0x08;
        let mut f = EtherFrame::new_checked(&mut b[..]).unwrap();
        assert_eq!(f.ethertype(), ETHERTYPE_IP);
        f.set_dst(EtherAddr::BROADCAST);
        f.set_src(EtherAddr([0, 1, 2, 3, 4, 5]));
        assert!(f.dst().is_broadcast());
        assert_eq!(f.src().to_string(), "00-01-02-03-04-05");
        assert_eq!(f.payload().len(), 6);
        assert_eq!(
            EtherFrame::new_checked(&b[..13]).err(),
            Some(WireError::Truncated)
        );
    }

    fn tagged_frame() -> Vec<u8> {
        let mut b = vec![
            0x02, 0, 0, 0, 0, 1, // dst
            0x02, 0, 0, 0, 0, 2, // src
            0x81, 0x00, // TPID
            0xa0, 0x2a, // PCP 5, DEI 0, VID 42
            0x08, 0x00, // IPv4
        ];
        b.extend_from_slice(&[0x45; 20]);
        b
    }

    #[test]
    fn vlan_tag_fields() {
        let b = tagged_frame();
        let f = EtherFrame::new_checked(&b[..]).unwrap();
        assert!(f.is_tagged());
        let t = VlanTag::new_checked(f.payload()).unwrap();
        assert_eq!((t.pcp(), t.dei(), t.vid()), (5, false, 42));
        assert_eq!(t.ethertype(), ETHERTYPE_IP);
        assert_eq!(t.payload().len(), 20);
        let r = VlanRepr::parse(&t).unwrap();
        assert_eq!(
            r,
            VlanRepr {
                pcp: 5,
                dei: false,
                vid: 42,
                ethertype: ETHERTYPE_IP
            }
        );
        let mut out = [0u8; 4];
        r.emit(&mut VlanTag::new_unchecked(&mut out[..]));
        assert_eq!(out, b[14..18]);

        let mut b = b;
        let mut t = VlanTag::new_checked(&mut b[14..]).unwrap();
        t.set_vid(0xfff);
        t.set_pcp(1);
        assert_eq!((t.pcp(), t.dei(), t.vid()), (1, false, 0xfff));
        t.set_tci(0x1000);
        assert!(t.dei());
    }

    #[test]
    fn repr_round_trip() {
        let b = tagged_frame();
        let f = EtherFrame::new_checked(&b[..]).unwrap();
        let r = EthernetRepr::parse(&f).unwrap();
        assert_eq!(r.ethertype, ETHERTYPE_VLAN);
        assert_eq!(r.src, EtherAddr([2, 0, 0, 0, 0, 2]));
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut EtherFrame::new_unchecked(&mut out[..]));
        assert_eq!(out, b[..14]);
    }

    #[test]
    fn every_truncated_prefix_is_rejected() {
        let b = tagged_frame();
        for n in 0..HEADER_LEN {
            assert_eq!(
                EtherFrame::new_checked(&b[..n]).err(),
                Some(WireError::Truncated)
            );
        }
        for n in 0..VLAN_TAG_LEN {
            assert_eq!(
                VlanTag::new_checked(&b[14..14 + n]).err(),
                Some(WireError::Truncated)
            );
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(f) = EtherFrame::new_checked(&b[..]) {
                let _ = (f.dst(), f.src(), f.ethertype(), f.is_tagged(), f.payload());
                let r = EthernetRepr::parse(&f).unwrap();
                let mut out = vec![0u8; r.buffer_len()];
                r.emit(&mut EtherFrame::new_unchecked(&mut out[..]));
                prop_assert_eq!(&out[..], &b[..14]);
            }
            if let Ok(t) = VlanTag::new_checked(&b[..]) {
                let _ = (t.tci(), t.pcp(), t.dei(), t.vid(), t.ethertype(), t.payload());
                let r = VlanRepr::parse(&t).unwrap();
                let mut out = [0u8; 4];
                r.emit(&mut VlanTag::new_unchecked(&mut out[..]));
                prop_assert_eq!(&out[..], &b[..4]);
            }
        }
    }
}
