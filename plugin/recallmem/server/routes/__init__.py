"""The HTTP routes of the service, one module per resource."""
