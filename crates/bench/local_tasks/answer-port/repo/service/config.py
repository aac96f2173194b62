"""Settings for the inventory service, read once at start-up."""

import os

DEFAULT_HOST = "127.0.0.1"
# The admin console listens on its own port, next to the service's.
ADMIN_PORT = 9100
DEFAULT_PORT = 8437
STOCK_FILE = "stock.json"


def listen_port():
    """The port the service listens on: $INVENTORY_PORT, else DEFAULT_PORT."""
    return int(os.environ.get("INVENTORY_PORT", DEFAULT_PORT))


def admin_port():
    return ADMIN_PORT
