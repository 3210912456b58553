"""The client link to a running servo_sim node, for tools: :class:`remote.ServoLink`
(one motor of any node, what the panel and rqt plugins use) and ``servo-sim-client``
(client.py)."""
