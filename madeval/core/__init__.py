"""The contracts: transcript and item types, the component base classes, the hook
specifications, the registry and plugin manager, and the option declarations every flag derives from.
"""
