# TODO: read the port from the environment
PORT = 8000


def main():
    print(f"serving on {PORT}")  # TODO: log instead
