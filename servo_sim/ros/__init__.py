"""The ROS 2 layer, by concern: the node (``node/``), the client link that tools use
(``link/``: the panel, rqt, servo-sim-client) and the fleet (``fleet/``); beside them what
they share: the declarative interface table (interface.py), parameters (params.py),
descriptors and messages (messages.py), spinning and leaving (spin.py, leave.py, logs.py),
the entry points (entry.py) and the launch files' arguments (launch_args.py,
topic_system.py)."""
