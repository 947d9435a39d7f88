//! Who is at the other end of a loopback TCP connection. TCP has no SO_PEERCRED, but the kernel's
//! socket diagnostics (netlink `NETLINK_SOCK_DIAG`) look up one socket by its addresses and say whose it
//! is: the client's socket is the one whose source is the peer's address and whose destination is ours.
//! With it, the HTTP listener closes another user's connection at once, as the Unix socket does. One
//! lookup is one request and one answer, whatever the number of sockets on the machine (reading
//! `/proc/net/tcp` instead would cost a scan of every socket, per connection).

use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use nix::sys::socket::{
    AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType, recv, send, socket,
};

/// The uid owning the client socket of a connection from `peer` to `local`, when it can be told: `None`
/// for a peer that is not on loopback (allowed only by `allow_non_loopback`, and then not ours to know),
/// or when the kernel does not answer (no such socket: the client is already gone).
pub fn owner(peer: SocketAddr, local: Option<SocketAddr>) -> Option<u32> {
    let (peer, local) = (unmapped(peer), unmapped(local?));
    if !peer.ip().is_loopback() {
        return None;
    }
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )
    .ok()?;
    // Unconnected, a netlink socket sends to the kernel; it answers within the send.
    send(fd.as_raw_fd(), &request(peer, local), MsgFlags::empty()).ok()?;
    let mut answer = [0u8; 1024];
    let n = recv(fd.as_raw_fd(), &mut answer, MsgFlags::MSG_DONTWAIT).ok()?;
    uid_in(&answer[..n])
}

/// Whether a connection owned by `uid` may stay: the same rule as the Unix socket's.
pub fn may_connect(uid: u32) -> bool {
    crate::server::peer_allowed(uid)
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`, from a listener on `[::]`) as the IPv4 it is.
fn unmapped(address: SocketAddr) -> SocketAddr {
    match address.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), address.port()),
            None => address,
        },
        IpAddr::V4(_) => address,
    }
}

/// `SOCK_DIAG_BY_FAMILY`, the message type of the request and of its answer.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 1;
/// The length of `struct nlmsghdr`.
const HEADER: usize = 16;

/// A netlink message asking for the TCP socket from `source` to `destination`: a `struct nlmsghdr`
/// then a `struct inet_diag_req_v2` whose `id` names the socket exactly (no dump).
fn request(source: SocketAddr, destination: SocketAddr) -> Vec<u8> {
    let family = match source {
        SocketAddr::V4(_) => nix::libc::AF_INET as u8,
        SocketAddr::V6(_) => nix::libc::AF_INET6 as u8,
    };
    let address = |a: SocketAddr| -> [u8; 16] {
        let mut bytes = [0u8; 16];
        match a.ip() {
            IpAddr::V4(v4) => bytes[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => bytes = v6.octets(),
        }
        bytes
    };
    let mut message = Vec::with_capacity(HEADER + 56);
    message.extend(((HEADER + 56) as u32).to_ne_bytes()); // nlmsg_len
    message.extend(SOCK_DIAG_BY_FAMILY.to_ne_bytes()); // nlmsg_type
    message.extend(NLM_F_REQUEST.to_ne_bytes()); // nlmsg_flags
    message.extend(1u32.to_ne_bytes()); // nlmsg_seq
    message.extend(0u32.to_ne_bytes()); // nlmsg_pid
    message.extend([family, nix::libc::IPPROTO_TCP as u8, 0, 0]); // family, protocol, ext, pad
    message.extend(u32::MAX.to_ne_bytes()); // idiag_states: any state
    message.extend(source.port().to_be_bytes()); // id.idiag_sport
    message.extend(destination.port().to_be_bytes()); // id.idiag_dport
    message.extend(address(source)); // id.idiag_src
    message.extend(address(destination)); // id.idiag_dst
    message.extend(0u32.to_ne_bytes()); // id.idiag_if
    message.extend([0xff; 8]); // id.idiag_cookie: INET_DIAG_NOCOOKIE
    message
}

/// The uid in the kernel's answer: a `struct nlmsghdr` then a `struct inet_diag_msg`, whose `idiag_uid`
/// comes after family, state, timer, retrans (4 bytes), the id (48), expires, rqueue and wqueue (12).
fn uid_in(answer: &[u8]) -> Option<u32> {
    let message_type = u16::from_ne_bytes(answer.get(4..6)?.try_into().ok()?);
    if message_type != SOCK_DIAG_BY_FAMILY {
        return None;
    }
    let at = HEADER + 4 + 48 + 12;
    Some(u32::from_ne_bytes(answer.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real connection on this machine: the client socket is ours, and a socket that is not there is
    /// nobody's.
    #[test]
    fn a_real_loopback_connection_is_owned_by_this_user() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server_side, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(
            owner(peer, listener.local_addr().ok()),
            Some(nix::unistd::getuid().as_raw())
        );
        let nobody_there: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(owner(nobody_there, listener.local_addr().ok()), None);
    }

    #[test]
    fn an_ipv6_loopback_connection_is_found_too() {
        let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback on this machine
        };
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server_side, peer) = listener.accept().unwrap();
        assert_eq!(
            owner(peer, listener.local_addr().ok()),
            Some(nix::unistd::getuid().as_raw())
        );
    }

    #[test]
    fn a_peer_off_loopback_is_not_looked_up() {
        let far: SocketAddr = "10.1.2.3:5000".parse().unwrap();
        assert_eq!(owner(far, "10.1.2.4:8787".parse().ok()), None);
    }

    /// `NLMSG_ERROR`: the kernel found no such socket, or refused the request.
    const NLMSG_ERROR: u16 = 2;

    #[test]
    fn an_error_answer_has_no_uid() {
        let mut answer = vec![0u8; 36];
        answer[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(uid_in(&answer), None);
        assert_eq!(uid_in(&[1, 2]), None);
    }
}
