print("capturer-probe")
