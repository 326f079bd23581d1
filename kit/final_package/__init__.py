"""The checks of a final (prize) package that need no hidden labels: its layout, the rules the
reference states, the parameter counter that never runs a file (params/), the report. Shipped in
every starting kit for check_final.py, and run again by the organizer's verify.py."""
