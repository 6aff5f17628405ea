//! Born and store hosts: address bytes then the port as a 4-byte integer (RocketMQ's
//! `MessageExt.socketAddress2ByteBuffer`); IPv4 takes 8 bytes, IPv6 20.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Appends `addr` in record form.
#[inline]
pub(crate) fn write_host(out: &mut Vec<u8>, addr: &SocketAddr) {
    match addr {
        SocketAddr::V4(a) => out.extend_from_slice(&a.ip().octets()),
        SocketAddr::V6(a) => out.extend_from_slice(&a.ip().octets()),
    }
    out.extend_from_slice(&u32::from(addr.port()).to_be_bytes());
}

/// Reads a host of the given family; `bytes` must be exactly 8 (IPv4) or 20 (IPv6) long.
/// The port keeps its low 16 bits, as Java's `InetSocketAddress` would reject more.
#[inline]
pub(crate) fn read_host(bytes: &[u8], v6: bool) -> SocketAddr {
    let (ip, port) = bytes.split_at(bytes.len() - 4);
    let port = u32::from_be_bytes([port[0], port[1], port[2], port[3]]) as u16;
    if v6 {
        let mut o = [0u8; 16];
        o.copy_from_slice(ip);
        SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(o), port, 0, 0))
    } else {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]), port))
    }
}
