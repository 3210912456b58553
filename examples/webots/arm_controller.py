"""A Webots controller for arm.wbt: the shoulder to 1 rad and the gripper opened, then
the shoulder turned back at 1 rad/s, then let go with its brake on. Runs in Webots as it
is, and with servo_sim:

    servo-sim controller examples/webots/arm_controller.py examples/webots/arm.wbt --duration 2
"""

from controller import Robot


class ArmController(Robot):
    def __init__(self):
        super().__init__()
        self.time_step = int(self.getBasicTimeStep())
        self.shoulder = self.getDevice("shoulder")
        self.sensor = self.shoulder.getPositionSensor()
        self.sensor.enable(self.time_step)
        self.shoulder.enableTorqueFeedback(self.time_step)
        self.finger = self.getDevice("gripper::left")  # the right finger is coupled
        self.finger_sensor = self.getDevice("right finger sensor")
        self.finger_sensor.enable(self.time_step)
        self.batterySensorEnable(self.time_step)

    def run(self):
        self.shoulder.setPosition(1.0)
        self.finger.setPosition(0.03)
        report_at, phase = 0.0, 0
        while self.step(self.time_step) != -1:
            t = self.getTime()
            if phase == 0 and t >= 1.0:
                phase = 1
                self.shoulder.setPosition(float("inf"))  # velocity control
                self.shoulder.setVelocity(-1.0)
            elif phase == 1 and t >= 1.5:
                phase = 2
                self.shoulder.setTorque(0)  # let go: the joint coasts...
                self.shoulder.getBrake().setDampingConstant(0.05)  # ...against the brake
            if t >= report_at - 1e-9:
                report_at += 0.25
                print(f"t = {t:4.2f} s   shoulder {self.sensor.getValue():6.3f} rad "
                      f"{self.shoulder.getTorqueFeedback():6.2f} N*m   right finger "
                      f"{self.finger_sensor.getValue():7.4f} m   battery "
                      f"{self.batterySensorGetValue():6.2f} J")
        print(f"{self.getName()}: done at t = {self.getTime():g} s")


ArmController().run()
