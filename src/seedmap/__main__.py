from seedmap.cli import main

raise SystemExit(main())
