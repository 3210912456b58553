"""Who may reach the door: password logins (failed ones logged, rate-limited) and the
node's setup (transports, discovery, Robot Raconteur's own ``--robotraconteur-*``
options: TLS, node name, discovery)."""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import RobotRaconteur as RR  # noqa: N817 - the name its docs use
from RobotRaconteur.RobotRaconteurPythonUtil import WrappedUserAuthenticatorDirectorPython

log = logging.getLogger("servo_sim")

#: Failed logins of one user are logged at most this often, s (the line counts the
#: failures since the last one).
LOGIN_LOG_PERIOD_S = 5.0
#: The prefix of Robot Raconteur's own node options (``--robotraconteur-nodename``,
#: ``--robotraconteur-load-tls`` ...), passed on to its node setup.
RR_OPTION = "--robotraconteur-"
#: numbers the fallback node names of this process
_RETRIES = itertools.count(1)


class LoggedLogins:
    """A users file's password check (``RR.PasswordFileUserAuthenticator``) that logs
    each failed login (the user and why), at most every LOGIN_LOG_PERIOD_S per user.
    (Not the client's address: Robot Raconteur hands a C++ authenticator the transport
    connection, but its Python hook only the user, the credentials and the service's
    context, and no thread-local address is set while it runs.)"""

    def __init__(self, users_text: str) -> None:
        self._check = RR.PasswordFileUserAuthenticator(users_text)
        self._lock = threading.Lock()
        #: user -> (when last logged, failures not logged since)
        self._failed: dict[str, tuple[float, int]] = {}

    def AuthenticateUser(self, username: str, credentials: Any,  # noqa: N802 - its API
                         context: Any) -> Any:
        """Robot Raconteur's call for a login: the user, or the failure raised again."""
        try:
            return self._check.AuthenticateUser(username, credentials, context)
        except Exception as exc:
            self.failed(username, getattr(exc, "message", None) or str(exc))
            raise

    def failed(self, user: str, why: str) -> None:
        """Log a failed login (rate-limited per user)."""
        now = time.monotonic()
        with self._lock:
            last, unlogged = self._failed.get(user, (-float("inf"), 0))
            if now - last < LOGIN_LOG_PERIOD_S:
                self._failed[user] = (last, unlogged + 1)
                return
            self._failed[user] = (now, 0)
        more = f" ({unlogged} more since the last line)" if unlogged else ""
        log.warning("Robot Raconteur login failed: user %r: %s%s", user, why, more)


def security_policy(users: Path) -> Any:
    """Password authentication from a Robot Raconteur users file (each line ``USER
    MD5-OF-PASSWORD PRIVILEGES``): a client without a valid login gets nothing; failed
    logins are logged (:class:`LoggedLogins`)."""
    authenticator = RR.WrappedUserAuthenticator()
    director = WrappedUserAuthenticatorDirectorPython(LoggedLogins(users.read_text()))
    authenticator.SetRRDirector(director, 0)
    director.__disown__()
    return RR.ServiceSecurityPolicy(authenticator, {"requirevaliduser": "true",
                                                    "allowobjectlock": "true"})


def node_flags(listen_all: bool) -> int:
    """The local transport (found on this machine by ``FindServiceByType``) and TCP: on
    loopback, or with ``listen_all`` on every interface and announced for discovery
    (IPv4 broadcast, IPv6 link-local), as Robot Raconteur's server nodes are."""
    flags = (RR.RobotRaconteurNodeSetupFlags_ENABLE_LOCAL_TRANSPORT
             | RR.RobotRaconteurNodeSetupFlags_LOCAL_TRANSPORT_START_SERVER
             | RR.RobotRaconteurNodeSetupFlags_ENABLE_TCP_TRANSPORT
             | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_START_SERVER)
    if listen_all:
        return (flags | RR.RobotRaconteurNodeSetupFlags_ENABLE_NODE_ANNOUNCE
                | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_IPV4_DISCOVERY
                | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_IPV6_DISCOVERY)
    return flags | RR.RobotRaconteurNodeSetupFlags_TCP_TRANSPORT_LISTEN_LOCALHOST


def rr_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """(Robot Raconteur's ``--robotraconteur-*`` options with their values, the rest)."""
    ours, rest = [], []
    args = iter(argv)
    for arg in args:
        if arg.startswith(RR_OPTION):
            ours.append(arg)
            if "=" not in arg and (value := next(args, None)) is not None:
                ours.append(value)
        else:
            rest.append(arg)
    return ours, rest


def node_setup(node_name: str, port: int, listen_all: bool,
               options: list[str]) -> tuple[Any, Any]:
    """A new Robot Raconteur node and its setup (see :func:`node_flags`), with its own
    ``--robotraconteur-*`` ``options`` (every one allowed: ``--robotraconteur-load-tls``,
    ``--robotraconteur-require-tls``, ``--robotraconteur-nodename`` ...). Where
    ``node_name`` is in use on this machine (another server of the same user) and no
    ``--robotraconteur-nodename`` is given, the node is ``NAME_PID`` (logged). What
    Robot Raconteur refuses (a port in use, a node name asked for and in use) is a
    ValueError with its message."""
    names = [node_name]
    if any(o.startswith(RR_OPTION + "nodename") for o in options):
        pass  # the option's name, or Robot Raconteur's refusal
    elif any(o.startswith(RR_OPTION + "nodeid") for o in options):
        # the local transport gives a named node the ID stored for its name, and will
        # not start by ID here ("Already open"): TCP only, with the ID asked for
        if not any(o.startswith(RR_OPTION + "local-enable") for o in options):
            options = [*options, RR_OPTION + "local-enable=false"]
            log.warning("--robotraconteur-nodeid: no local transport (rr+local), TCP only")
    else:
        names.append(f"{node_name}_{os.getpid()}_{next(_RETRIES)}")
    for name in names:
        node = RR.RobotRaconteurNode()
        node.Init()
        try:
            setup = RR.RobotRaconteurNodeSetup(name, port, node_flags(listen_all),
                                               0xFFFFFFFF, node, ["servo-sim-rr", *options])
        except Exception as exc:  # noqa: BLE001 - Robot Raconteur's (a plain Exception)
            why = getattr(exc, "message", None) or str(exc)
            if "Name already in use" in why and name != names[-1]:
                log.warning("Robot Raconteur node name %r is in use on this machine: "
                            "serving as %r (--robotraconteur-nodename NAME to choose)",
                            name, names[-1])
                continue
            raise ValueError(f"Robot Raconteur node {name!r} on port {port}: {why}") from None
        return node, setup
    raise AssertionError("unreachable")


def require_tls(node: Any, setup: Any) -> bool:
    """Whether the node serves TCP over TLS only (``--robotraconteur-require-tls``);
    ValueError, naming the file Robot Raconteur looked for, where it does but no node
    certificate loaded (Robot Raconteur only warns, and then serves nobody)."""
    tcp = setup.tcp_transport
    if tcp is None or not tcp.RequireTls:
        return False
    if not tcp.IsTlsNodeCertificateLoaded:
        root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
        where = ("$ROBOTRACONTEUR_SYSTEM_CONFIG_DIR (default /etc/robotraconteur), as root"
                 if root else "$ROBOTRACONTEUR_USER_CONFIG_DIR (default "
                 "~/.config/RobotRaconteur)")
        raise ValueError(f"--robotraconteur-require-tls: no TLS certificate loaded for node "
                         f"{node.NodeID}: Robot Raconteur reads "
                         f"certificates/{node.NodeID}.p12 under {where} (a password-less "
                         "PKCS#12: docs/robot-raconteur.md, 'Who may command, and beyond "
                         "loopback')")
    return True

