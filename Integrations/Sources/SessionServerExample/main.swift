print("session-server")
