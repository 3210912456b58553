"""A fleet of robots on one domain (launch/fleet.launch.py): their namespaces and configs
(robots.py), one process that forks the robots' nodes (host.py), the nudge that joins
the discovery servers (nudge.py), the ros2 daemon's restart (daemon.py) and a child that
ends with its parent (follow.py)."""
