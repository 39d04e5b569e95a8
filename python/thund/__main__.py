from thund._cli import main

main()
