"""Starts the inventory service."""

from . import config


def main():
    print(f"listening on {config.DEFAULT_HOST}:{config.listen_port()}")


if __name__ == "__main__":
    main()
