"""The ``soulframe`` command line's engine: the click app (:mod:`.app`), what every command
shares (:mod:`.state`) and one module per command group. Plugins extend the command line
through :mod:`soulframe.cli`.
"""
