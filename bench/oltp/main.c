#include "oltp.h"
int main(int argc, char **argv) { return oltp_main(argc, argv); }
