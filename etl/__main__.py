import sys

from etl.cli import main

sys.exit(main())
