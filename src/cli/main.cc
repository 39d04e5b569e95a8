#include <iostream>
int main() { std::cout << "thund\n"; return 0; }
