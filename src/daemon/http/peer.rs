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

/// Whether a connection from `peer`, accepted on `local` (the accepted socket's own address, not the
/// listener's, which may be `0.0.0.0`), may stay.
///
/// On a loopback listener (the default) the client is on this machine by definition, whatever source
/// address it chose: its socket must be found and be ours (or root's), else the connection is closed. On
/// a listener the settings put on another address (`allow_non_loopback`), a client that is found and is
/// another user's is closed; one that is not found is taken to be remote, which the settings allow.
pub fn allowed(peer: SocketAddr, local: SocketAddr) -> Result<(), String> {
    let (peer, local) = (unmapped(peer), unmapped(local));
    match owner(peer, local) {
        // The same rule as the Unix socket's: our own uid, or root.
        Some(uid) if crate::daemon::socket::peer_allowed(uid) => Ok(()),
        Some(uid) => Err(format!("its socket belongs to uid {uid}")),
        None if local.ip().is_loopback() => {
            Err("its socket could not be found on this machine (gone, or hidden)".into())
        }
        None => Ok(()),
    }
}

/// Whether the lookup works on this machine (the kernel's sock_diag may be missing, or forbidden to
/// the daemon): a loopback connection the daemon makes to itself must be found, and be its own.
pub fn lookup_works() -> bool {
    let Ok(listener) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return false;
    };
    let Ok(address) = listener.local_addr() else {
        return false;
    };
    let Ok(client) = std::net::TcpStream::connect(address) else {
        return false;
    };
    let (Ok(source), uid) = (client.local_addr(), nix::unistd::getuid().as_raw()) else {
        return false;
    };
    owner(source, address) == Some(uid)
}

/// The uid owning the client socket that goes from `peer` to `local`, when the kernel finds it.
fn owner(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )
    .ok()?;
    // Unconnected, a netlink socket sends to the kernel; it answers within the send.
    send(
        fd.as_raw_fd(),
        &request(peer, local, loopback_index()),
        MsgFlags::empty(),
    )
    .ok()?;
    let mut answer = [0u8; 1024];
    let n = recv(fd.as_raw_fd(), &mut answer, MsgFlags::MSG_DONTWAIT).ok()?;
    uid_in(&answer[..n])
}

/// The loopback interface's index. The kernel's lookup by address skips a socket bound to a device
/// (SO_BINDTODEVICE, which any user may set) unless the request names that device; naming `lo` finds
/// sockets bound to it and sockets bound to none.
fn loopback_index() -> u32 {
    static INDEX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *INDEX.get_or_init(|| nix::net::if_::if_nametoindex("lo").unwrap_or(1))
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

/// TCP_TIME_WAIT: a socket in it is reported with uid 0, which would read as root's.
const TIME_WAIT: u32 = 6;

/// A netlink message asking for the TCP socket from `source` to `destination` on interface `interface`:
/// a `struct nlmsghdr` then a `struct inet_diag_req_v2` whose `id` names the socket exactly (no dump).
fn request(source: SocketAddr, destination: SocketAddr, interface: u32) -> Vec<u8> {
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
    message.extend((!(1u32 << TIME_WAIT)).to_ne_bytes()); // idiag_states: all but TIME_WAIT
    message.extend(source.port().to_be_bytes()); // id.idiag_sport
    message.extend(destination.port().to_be_bytes()); // id.idiag_dport
    message.extend(address(source)); // id.idiag_src
    message.extend(address(destination)); // id.idiag_dst
    message.extend(interface.to_ne_bytes()); // id.idiag_if
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
        let local = listener.local_addr().unwrap();
        assert_eq!(owner(peer, local), Some(nix::unistd::getuid().as_raw()));
        assert_eq!(allowed(peer, local), Ok(()));
        let nobody_there: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert_eq!(owner(nobody_there, local), None);
        assert!(
            allowed(nobody_there, local).is_err(),
            "not found on loopback"
        );
        assert!(lookup_works());
    }

    #[test]
    fn an_ipv6_loopback_connection_is_found_too() {
        let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
            return; // no IPv6 loopback on this machine
        };
        let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server_side, peer) = listener.accept().unwrap();
        assert_eq!(
            owner(peer, listener.local_addr().unwrap()),
            Some(nix::unistd::getuid().as_raw())
        );
    }

    #[test]
    fn a_remote_peer_on_a_non_loopback_listener_is_left_to_the_settings() {
        let far: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert_eq!(allowed(far, "192.0.2.4:8787".parse().unwrap()), Ok(()));
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
