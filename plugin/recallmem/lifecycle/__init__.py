"""The memory's metabolism: facts that age, expire, merge and are copied between scopes."""
