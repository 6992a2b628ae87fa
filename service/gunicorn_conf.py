"""gunicorn settings, read from the service's Settings (`tutorqa serve` passes this file with -c)."""

from prometheus_client import multiprocess

from service.settings import Settings

_server = Settings.from_env().server
bind = _server.bind
workers = _server.workers
threads = _server.threads
worker_class = "gthread"
timeout = 120                 # a cold LLM answer on 2 CPU cores can take tens of seconds
graceful_timeout = 30
accesslog = "-"
wsgi_app = "service.app:create_app()"


def on_starting(server):  # noqa: ARG001 - gunicorn's hook signature
    """Create the SQLite files once, before the workers fork: two workers switching a new file to WAL
    at the same moment fail with "database is locked" and the service does not boot."""
    from service.app import prepare_storage

    prepare_storage(Settings.from_env())


def child_exit(server, worker):  # noqa: ARG001 - gunicorn's hook signature
    multiprocess.mark_process_dead(worker.pid)
