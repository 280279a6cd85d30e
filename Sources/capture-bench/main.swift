print("capture-bench: not implemented yet")
