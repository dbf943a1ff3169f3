"""The hook invokers (graveler.actions.HookInvoker): a webhook over HTTP and a synchronous Lambda invoke."""

from .destinations import Destinations
from .lambda_invoke import LambdaHooks
from .webhook import WebhookHooks

__all__ = ["Destinations", "LambdaHooks", "WebhookHooks", "destinations", "lambda_invoke", "webhook"]
