"""Pure formatters: findings and requests in, text out. Only ``terminal`` imports rich."""

from ._json import dumps_line, dumps_pretty

__all__ = ["dumps_line", "dumps_pretty"]
