"""Where the daemon listens, looked for as hookd's own clients look (docs/commands.md, "Where things
are"), and a connection to it that is known to be the user's own daemon."""

from __future__ import annotations

import os
import socket
import struct
from typing import List, Mapping, Optional


class HookdError(Exception):
    """The daemon could not be reached, refused a request, or the connection to it was lost."""


def socket_places(environ: Optional[Mapping[str, str]] = None, uid: Optional[int] = None) -> List[str]:
    """Every place a daemon of this user may listen, in the order to try them: `$HOOKD_SOCKET` alone
    when it is set; else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, then `/run/user/$UID/hookd/hookd.sock`,
    then `/tmp/hookd-$UID/hookd.sock`. An empty variable counts as unset.

    The daemon binds the first its own environment gives; a client started without `XDG_RUNTIME_DIR`
    (`su -`, cron, ssh without a login session) still finds the daemon the login session started."""
    env = os.environ if environ is None else environ
    user = os.getuid() if uid is None else uid
    if env.get("HOOKD_SOCKET"):
        return [env["HOOKD_SOCKET"]]
    places: List[str] = []
    if env.get("XDG_RUNTIME_DIR"):
        places.append(os.path.join(env["XDG_RUNTIME_DIR"], "hookd", "hookd.sock"))
    for place in ("/run/user/%d/hookd/hookd.sock" % user, "/tmp/hookd-%d/hookd.sock" % user):
        if place not in places:
            places.append(place)
    return places


def peer_uid(sock: socket.socket) -> Optional[int]:
    """The uid of the process at the other end (SO_PEERCRED), or None where the system cannot say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def open_socket(path: Optional[str] = None) -> socket.socket:
    """A connection to the daemon at `path`, else at the first of [`socket_places`] where a daemon of
    this user (or root) accepts. A process of another user listening there is passed over: the events
    a hook is given are the user's own, and the answers decide what the agent runs."""
    places = [path] if path else socket_places()
    problems: List[str] = []
    for place in places:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(place)
        except FileNotFoundError:
            sock.close()
            problems.append("%s: no such socket" % place)
            continue
        except OSError as e:
            sock.close()
            problems.append("%s: %s" % (place, e.strerror or e))
            continue
        owner = peer_uid(sock)
        if owner is not None and owner not in (os.getuid(), 0):
            sock.close()
            problems.append("%s: served by uid %d, not this user's daemon" % (place, owner))
            continue
        return sock
    raise HookdError(
        "hookd is not running (start it with `hookd serve`): %s" % "; ".join(problems)
    )
