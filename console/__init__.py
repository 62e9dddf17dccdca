"""The review console for knowledge owners (``nuggetflow console``): a web application,
a client of the gRPC query service. See :mod:`console.app`."""
