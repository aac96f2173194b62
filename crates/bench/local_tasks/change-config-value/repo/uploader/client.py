"""Uploads files to the storage server, retrying failures."""

import configparser
import pathlib
import time

SETTINGS = pathlib.Path(__file__).with_name("settings.ini")


def load_settings():
    parser = configparser.ConfigParser()
    parser.read(SETTINGS)
    return parser


def upload(path, send):
    settings = load_settings()
    retries = settings.getint("upload", "retries")
    backoff = settings.getint("upload", "backoff_seconds")
    for attempt in range(retries + 1):
        try:
            return send(pathlib.Path(path).read_bytes())
        except OSError:
            if attempt == retries:
                raise
            time.sleep(backoff)
