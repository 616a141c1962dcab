sample detached signature of agreement-a.pdf (not a real one)
