"""The hook invokers (graveler.actions.HookInvoker): a webhook over HTTP and a synchronous Lambda invoke."""

from .lambda_invoke import LambdaHooks
from .webhook import WebhookHooks

__all__ = ["LambdaHooks", "WebhookHooks"]
