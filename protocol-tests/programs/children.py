import os
import subprocess
import sys

os.system("echo from a shell")
sleeper = subprocess.Popen(["sleep", "300"])
pid = sleeper.pid
sys.stderr.write("e" * 1500000 + "\n")
print("done")
sys.exit(5)
