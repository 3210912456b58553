"""A Webots controller for a pan-tilt head (devices "pan" and "tilt"): look right, then
up, printing the encoders. The same file drives config/dynamixel.yaml's two servos:

    servo-sim controller examples/webots/pan_tilt.py config/dynamixel.yaml --duration 2
"""

from controller import Robot

robot = Robot()
time_step = int(robot.getBasicTimeStep())
pan, tilt = robot.getDevice("pan"), robot.getDevice("tilt")
for motor in (pan, tilt):
    motor.getPositionSensor().enable(time_step)

report_at = 0.0
while robot.step(time_step) != -1:
    t = robot.getTime()
    pan.setPosition(1.0)  # every step: a servo that dropped out and came back follows
    tilt.setPosition(-0.5 if t >= 1.0 else 0.0)
    if t >= report_at - 1e-9:
        report_at += 0.5
        print(f"t = {t:4.2f} s   pan {pan.getPositionSensor().getValue():6.3f} rad   "
              f"tilt {tilt.getPositionSensor().getValue():6.3f} rad")
